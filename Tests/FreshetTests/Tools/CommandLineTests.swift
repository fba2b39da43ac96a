import Foundation
import Freshet
import FreshetCommands
import Testing

extension LogToolTests {
    @Suite("freshet command line")
    struct CommandLineTests {
        @Test("help COMMAND and COMMAND --help print the same usage; --version names the log format")
        func helpAndVersion() {
            for command in ["dump", "replay", "verify", "stats", "why", "export", "import"] {
                let help = runTool(["help", command])
                #expect(help.status == 0)
                #expect(help.stdout == [Command.helpTexts[command]])
                #expect(runTool([command, "--help"]).stdout == help.stdout)
                #expect(runTool([command, "/some/dir", "-h"]).stdout == help.stdout)
            }
            #expect(runTool(["help"]).stdout == [Command.usage])
            #expect(runTool(["--version"]).stdout == ["freshet 0.1.0 (log format 1, store format 2)"])
            let unknown = runTool(["help", "frobnicate"])
            #expect(unknown.status == 2)
            #expect(unknown.stderr == [#"freshet: help: no command "frobnicate"; try `freshet help`"#])
        }

        @Test("replay options parse into the command, and bad ones are usage errors", arguments: [
            (["replay", "d", "--to", "7", "--collection", "pokemon/", "--json"], "replay d lsn 7 pokemon/ json"),
            (["replay", "d", "--at", "2026-01-01T00:00:05Z"], "replay d time 1767225605.0 - text"),
            (["replay", "d", "--to", "7", "--at", "2026-01-01T00:00:05Z"], "error replay: give --to or --at once, not both"),
            (["replay", "d", "--at", "yesterday"], #"error --at needs an ISO 8601 time such as 2026-01-01T00:00:05Z, got "yesterday""#),
            (["verify"], "error verify: missing store directory (freshet verify DIR)"),
            (["stats", "d", "--deep"], "error stats: unknown option --deep; try `freshet help stats`"),
        ])
        func parsing(arguments: [String], expected: String) {
            let parsed: String
            do {
                switch try Command.parse(arguments) {
                case .replay(let o):
                    let point = switch o.point {
                    case .end: "end"
                    case .lsn(let l): "lsn \(l)"
                    case .time(let t): "time \(t.timeIntervalSince1970)"
                    }
                    parsed = "replay \(o.directory) \(point) \(o.collection ?? "-") \(o.json ? "json" : "text")"
                default: parsed = "other"
                }
            } catch {
                parsed = "error \(error.message)"
            }
            #expect(parsed == expected)
        }

        @Test("a collection filter is a name, or a prefix when it ends in / or *", arguments: [
            ("pokemon", "pokemon", true), ("pokemon", "pokemon-detail", false), ("pokemon/", "pokemon/25", true),
            ("pokemon/", "pokemon", false), ("poke*", "pokemon-detail", true), ("*", "anything", true),
        ])
        func filter(value: String, collection: String, matches: Bool) {
            #expect(CollectionFilter(value).matches(collection) == matches)
        }

        @Test("dump says on stderr when --collection matches nothing, and accepts a prefix")
        func dumpFilter() async throws {
            try await withRecordedRun { directory, _ in
                let none = runTool(["dump", directory.path, "--collection", "pokemon/"])
                #expect(none.status == 0)
                #expect(none.stdout == [])
                #expect(none.stderr == [#"freshet: no collection matches "pokemon/" in \#(directory.path) (a prefix ends in / or *)"#])
                let prefix = runTool(["dump", directory.path, "--collection", "fav*"])
                #expect(prefix.stdout.count == 1)
                #expect(prefix.stderr == [])
            }
        }
    }
}
