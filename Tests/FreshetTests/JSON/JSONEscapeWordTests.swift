import Foundation
import FreshetCommands
import Synchronization
import Testing
@testable import Freshet

/// The eight-byte tests behind `dump --json` and `export` (issue 8's speed round 9): the JSON
/// escape mask, the escaping that jumps by it, the printable check in front of
/// ``TerminalEscaping/escaped(_:)``, and lines handed over as bytes.
@Suite("JSON escaping and printable text, eight bytes at a time")
struct JSONEscapeWordTests {
    /// Whether JSON needs `byte` escaped: a control byte, `"` or `\`.
    static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C }

    /// The escaping one byte at a time, as `JSONWriter.escapedString` did before the words.
    static func escapedByBytes(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x22]
        for c in bytes {
            switch c {
            case 0x22, 0x5C: out += [0x5C, c]
            case 0x08: out += Array(#"\b"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0C: out += Array(#"\f"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case ..<0x20: out += Array(String(format: "\\u%04x", Int(c)).utf8)
            default: out.append(c)
            }
        }
        out.append(0x22)
        return out
    }

    static func word(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }

    @Test("the mask flags a word exactly when one of its bytes needs escaping, and its lowest flag is the first such byte")
    func maskIsExact() {
        for position in 0..<8 {
            for byte in 0...255 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 8)
                bytes[position] = UInt8(byte)
                let mask = JSONWriter.escapeMask(Self.word(bytes))
                let escapes = Self.needsEscape(UInt8(byte))
                #expect((mask != 0) == escapes, "0x\(String(byte, radix: 16)) at \(position)")
                if escapes { #expect(mask.trailingZeroBitCount / 8 == position, "0x\(String(byte, radix: 16)) at \(position)") }
                // A second byte to escape above it never moves the lowest flag.
                for later in (position + 1)..<8 where escapes {
                    var two = bytes
                    two[later] = 0x00
                    #expect(JSONWriter.escapeMask(Self.word(two)).trailingZeroBitCount / 8 == position)
                }
            }
        }
    }

    @Test("every byte value at every position of strings of 1 to 20 bytes is escaped as byte-by-byte escaping does")
    func escapedLikeBytewise() {
        for count in 1...20 {
            for position in 0..<count {
                for byte in [0x00, 0x01, 0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7E, 0x7F, 0x80, 0xC3, 0xFF] as [UInt8] {
                    var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: count)
                    bytes[position] = byte
                    var w = JSONWriter()
                    bytes.withUnsafeBufferPointer { w.escapedString($0) }
                    #expect(w.bytes == Self.escapedByBytes(bytes), "\(count) bytes, 0x\(String(byte, radix: 16)) at \(position)")
                }
            }
        }
    }

    @Test("5,000 random strings dense in quotes, backslashes, controls and UTF-8 escape as byte-by-byte escaping does")
    func randomStrings() {
        let random = RandomSource.seeded(16)
        let alphabet: [UInt8] = [0x00, 0x07, 0x0A, 0x1F, 0x20, 0x22, 0x22, 0x5C, 0x5C, 0x2F, 0x41, 0x61, 0x7A, 0x7F, 0xC3, 0xA9]
        for _ in 0..<5_000 {
            let count = Int(random.next() % 40)
            let bytes = (0..<count).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            var w = JSONWriter()
            bytes.withUnsafeBufferPointer { w.escapedString($0) }
            #expect(w.bytes == Self.escapedByBytes(bytes), "\(bytes)")
        }
    }

    @Test("a \\, a control, DEL, C1 or a bidi mark at any position of 1 to 17 characters is escaped; printable ASCII is returned as it is", arguments: [
        ("\\", "\\\\"), ("\n", "\\n"), ("\u{1B}", "\\u{1B}"), ("\u{7F}", "\\u{7F}"), ("\u{9B}", "\\u{9B}"), ("\u{202E}", "\\u{202E}"), ("é", "é"), ("~", "~"),
    ])
    func terminalEscapingAtEveryPosition(character: String, escaped: String) {
        for count in 1...17 {
            for position in 0..<count {
                let prefix = String(repeating: "a", count: position)
                let suffix = String(repeating: "b", count: count - position - 1)
                #expect(TerminalEscaping.escaped(prefix + character + suffix) == prefix + escaped + suffix, "\(count) characters, at \(position)")
            }
            let plain = String(repeating: "z", count: count)
            #expect(TerminalEscaping.escaped(plain) == plain)
        }
    }

    /// `arguments` run through a `Tool` whose lines arrive as strings, then through one that
    /// takes them as bytes (as the `freshet` binary does): both outputs, line by line.
    static func linesBothWays(_ arguments: [String]) -> (strings: [String], bytes: [String], statuses: [Int32]) {
        let plain = runTool(arguments)
        let lines = Mutex<[String]>([])
        let tool = Tool(standardOutput: { line in lines.withLock { $0.append(line) } }, standardError: { _ in },
                        standardOutputBytes: { bytes in lines.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) } })
        let status = tool.run(arguments)
        return (plain.stdout, lines.withLock { $0 }, [plain.status, status])
    }

    @Test("dump --json and export write the same lines whether they are taken as strings or as bytes")
    func linesAsBytes() async throws {
        try await withDumpableStore { directory in
            for arguments in [["dump", directory.path, "--json"], ["export", directory.path], ["export", directory.path, "--redact", "name"]] {
                let (strings, bytes, statuses) = Self.linesBothWays(arguments)
                #expect(statuses == [0, 0], "\(arguments)")
                #expect(strings.count == 5, "\(arguments)")
                #expect(bytes == strings, "\(arguments)")
            }
        }
    }
}
