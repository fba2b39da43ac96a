import Foundation

// Decodable models of the real fixture rows, for comparing RowDecoder with JSONDecoder.

struct NamedRef: Codable, Equatable { var name: String; var url: String }

struct ListEntryRow: Codable, Equatable { var name: String; var url: URL }

struct FullPokemon: Codable, Equatable {
    struct Ability: Codable, Equatable { var ability: NamedRef?; var is_hidden: Bool; var slot: Int8 }
    struct PastAbility: Codable, Equatable { var abilities: [Ability]; var generation: NamedRef }
    struct Stat: Codable, Equatable { var base_stat: UInt16; var effort: Int; var stat: NamedRef }
    struct Move: Codable, Equatable {
        struct Detail: Codable, Equatable { var level_learned_at: Int; var move_learn_method: NamedRef; var version_group: NamedRef; var order: Int? }
        var move: NamedRef
        var version_group_details: [Detail]
    }
    struct Sprites: Codable, Equatable {
        var front_default: URL?
        var back_female: String?
        var other: [String: [String: String?]]?
    }
    var id: Int
    var name: String
    var base_experience: Int?
    var height: Float
    var weight: Double
    var order: Int64
    var is_default: Bool
    var abilities: [Ability]
    var past_abilities: [PastAbility]
    var stats: [Stat]
    var moves: [Move]
    var cries: [String: URL?]
    var sprites: Sprites
    var types: [[String: NamedRefOrInt]]
    var forms: [NamedRef]
    var location_area_encounters: String
    var missing: String?
}

/// A value that is either a reference or a number, decoded with a single-value container.
enum NamedRefOrInt: Codable, Equatable {
    case ref(NamedRef), int(Int)
    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let n = try? c.decode(Int.self) { self = .int(n) } else { self = .ref(try c.decode(NamedRef.self)) }
    }
    func encode(to encoder: any Encoder) throws {}
}

struct TodoRow: Codable, Equatable { var userId: Int; var id: Int; var title: String; var completed: Bool }
struct CommentRow: Codable, Equatable { var postId: UInt; var id: Int32; var name: String; var email: String; var body: String }
struct UserRow: Codable, Equatable {
    struct Address: Codable, Equatable { var street: String; var city: String; var geo: [String: String] }
    var id: Int; var name: String; var address: Address; var company: [String: String]
}

/// Any JSON value, decoded by trying each kind in turn (exercises every container).
indirect enum AnyJSON: Decodable, Equatable {
    case null, bool(Bool), int(Int), double(Double), string(String), array([AnyJSON]), object([String: AnyJSON])
    init(from decoder: any Decoder) throws {
        if var a = try? decoder.unkeyedContainer() {
            var items: [AnyJSON] = []
            while !a.isAtEnd { items.append(try a.decode(AnyJSON.self)) }
            self = .array(items)
            return
        }
        if let o = try? decoder.container(keyedBy: AnyKey.self) {
            var members: [String: AnyJSON] = [:]
            for key in o.allKeys { members[key.stringValue] = try o.decode(AnyJSON.self, forKey: key) }
            self = .object(members)
            return
        }
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let i = try? c.decode(Int.self) { self = .int(i) }
        else if let d = try? c.decode(Double.self) { self = .double(d) }
        else { self = .string(try c.decode(String.self)) }
    }
}

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

/// Reads through nested containers by hand, so errors inside them carry those keys.
struct Nested: Decodable, Equatable {
    enum Outer: String, CodingKey { case a }
    enum Inner: String, CodingKey { case b }
    var values: [Int]
    init(from decoder: any Decoder) throws {
        let outer = try decoder.container(keyedBy: Outer.self)
        let inner = try outer.nestedContainer(keyedBy: Inner.self, forKey: .a)
        var list = try inner.nestedUnkeyedContainer(forKey: .b)
        var values: [Int] = []
        while !list.isAtEnd {
            var pair = try list.nestedUnkeyedContainer()
            values.append(try pair.decode(Int.self))
            values.append(try pair.decode(Int.self))
        }
        self.values = values
    }
}

struct Scalars: Codable, Equatable {
    var i8: Int8?; var u8: UInt8?; var i: Int?; var u: UInt?; var u64: UInt64?; var f: Float?; var d: Double?
    var date: Date?; var data: Data?; var url: URL?; var decimal: Decimal?; var ints: [Int: String]?
}
