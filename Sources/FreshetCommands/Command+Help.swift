import Freshet

extension Command {
    /// `freshet --version`: the tool's version and the log format it reads.
    public static let versionText = "freshet 0.1.0 (log format \(LogRecord.formatVersion), store format \(StoreFormat.current))"

    /// `freshet help`: every command in one line each.
    public static let usage = """
        usage: freshet COMMAND DIR [OPTIONS]     (freshet help COMMAND for one command)
          dump    DIR [--from LSN] [--to LSN] [--collection NAME|PREFIX] [--json]
                  one line per event: LSN, time, kind, collection, summary
          replay  DIR [--to LSN | --at TIME] [--collection NAME|PREFIX] [--json]
                  rebuild the projection from the log: rows, SyncMark, status, pending mutations
          verify  DIR [--json]
                  checksums, LSN continuity, and replay equals the stored state byte for byte
                  (SyncMarks as read, with the stamp journal applied)
          stats   DIR [--json]
                  records by kind and collection, sizes, free pages, pending mutations, readers
          why     DIR COLLECTION [--lsn LSN | --at TIME] [--policy P] [--json] [--svg FILE]
                  a one-line verdict (fresh, stale by age, failing, offline, invalidated, …) and its timeline
          export  DIR [--from LSN] [--redact FIELD,…]
                  the log as JSON Lines (docs/log-format.md §13); credential headers always redacted
          import  DIR FILE [--through LSN]
                  a new store from exported JSON Lines (FILE - reads standard input)
          compact DIR [--keep DURATION] [--vacuum]
                  checkpoint the state, drop older records (keeps the window and pending mutations)
          help [COMMAND], COMMAND --help, --version
        An LSN (log sequence number) numbers each event of the log: 1, 2, 3, … never reused.
        No command sends a store's pending mutations; all but compact (which writes a checkpoint)
        and import (which creates a new store) open the store read-only.
        exit status: 0 ok, 1 problem found, 2 usage error, unreadable store, or standard output
        that cannot be written (a full disk: one line, freshet: cannot write the output: …)
        """

    /// `freshet help COMMAND`, by command name.
    public static let helpTexts: [String: String] = [
        "compact": """
            usage: freshet compact DIR [--keep DURATION] [--vacuum]
            Writes a checkpoint record holding the folded state (rows, SyncMarks, mutation
            state) through the last record older than the window, and removes the records it
            covers — except the proposals of mutations still pending, which the fold reads
            back. Kept records keep their LSNs; the checkpoint gets the next one. One write
            transaction: a crash leaves the old log or the new one. replay, verify and why then
            start from the checkpoint. --keep DURATION is the history kept, by record time
            (7d, 12h, 90m, 30s, 0; default 7d). --vacuum then rewrites data.mdb without free
            pages (mdb_env_copy2 with MDB_CP_COMPACT, atomic rename); it is refused while
            another process has the store open. The store is opened for writing but its
            pending mutations are never sent. Progress goes to standard error.
            exit status: 0 ok, 1 damaged records (nothing removed) or vacuum refused,
            2 usage error or unreadable store
            """,
        "dump": """
            usage: freshet dump DIR [--from LSN] [--to LSN] [--collection NAME|PREFIX] [--json]
            Prints one line per event of the log in LSN order: LSN, time (UTC), kind, collection
            and a summary. --from/--to bound the LSNs (both inclusive). --collection takes a
            name, or a prefix ending in / or * (pokemon/ or pokemon*). --json prints JSON Lines.
            LSNs missing from the range (not accounted for by a checkpoint) are named on stderr.
            exit status: 0 ok, 1 unreadable or missing records, 2 usage error, unreadable store
            or --from/--to past the end
            """,
        "replay": """
            usage: freshet replay DIR [--to LSN | --at TIME] [--collection NAME|PREFIX] [--json]
            Folds the log from its first record (after a compaction: from the latest checkpoint's
            state; earlier LSNs are refused) into memory with the store's own fold
            and prints, per collection, the projection at that point: rows (ID and JSON value)
            with pending mutations on top, SyncMark, status, and the pending mutations.
            --to LSN stops after that LSN (an LSN the log is missing: after the one before it,
            and the gap is named on stderr); --at TIME (ISO 8601, such as 2026-01-01T00:00:05Z)
            takes records in log order up to the first one stamped later, compared to the
            millisecond (a time printed by dump takes that record). Statuses are judged
            at that time under the policy each collection's last refresh recorded (http
            when none is recorded, as in logs of earlier versions).
            --collection takes a name, or a prefix ending in / or *. --json prints JSON Lines.
            exit status: 0 ok, 1 unreadable or missing records (skipped), 2 usage error,
            unreadable store, an LSN past the end or a time before the first record
            """,
        "verify": """
            usage: freshet verify DIR [--json]
            Checks that every record decodes and passes its CRC-32C, that LSNs run on from 1
            without a gap (after a compaction: from the latest checkpoint on), and that folding the log rebuilds the materialized databases
            (rows, rowIndex, marks, meta, pending, mutations, idMap, confirmed) byte for byte;
            SyncMarks are compared as read, with the stamp journal (meta markStamps) applied,
            and a stamp readers ignore or a damaged journal is a problem of meta.
            Each problem is one line naming the database, collection, row ID and LSN.
            The reading runs in a child process: if a damaged LMDB page crashes it, that is
            reported as a problem (data.mdb, the signal) and the exit status is 1.
            exit status: 0 ok, 1 problems found, 2 usage error or unreadable store
            """,
        "stats": """
            usage: freshet stats DIR [--json]
            Prints records by kind and by collection, the log's and the file's size, LMDB's
            used and free pages, the oldest and newest LSN and time, pending mutations, the
            largest collections, the read transactions open now and the store format (2; a format 1
            store becomes 2 when opened read-write with no other process). LSNs missing from the log
            (not accounted for by a checkpoint) are named on stderr.
            exit status: 0 ok, 1 unreadable or missing records, 2 usage error or unreadable store
            """,
        "why": """
            usage: freshet why DIR COLLECTION [--lsn LSN | --at TIME] [--policy P] [--json] [--svg FILE]
            Says in one line why the collection shows what it shows — never fetched, local-only,
            offline or failing since (attempts, last error), invalidated and not fetched since,
            no-store/no-cache, stale by age, fresh (for how long, under which rule), renewed by
            a 304, rows masked by pending mutations — then the records behind it.
            Without --lsn/--at the whole log is judged now; --lsn LSN judges the state after
            that record at its time; --at TIME takes records in log order up to TIME and judges
            at TIME. The verdict uses the freshness policy (and retry settings) the last refresh
            recorded in the log, and says so; --policy (http, always, manual or maxAge=SECONDS)
            overrides it; with neither, http (logs of earlier versions record none). --svg FILE also
            writes the timeline as an SVG picture (marks, fresh and stale bands, the moment asked),
            through FILE like a shell redirect (mode 0644, links followed), never inside DIR.
            exit status: 0 ok, 1 unreadable or missing records (skipped; --lsn of a missing
            LSN judges after the one before it), 2 usage error, unreadable store, an LSN past
            the end or an SVG file that cannot be written
            """,
        "export": """
            usage: freshet export DIR [--from LSN] [--redact FIELD,…]
            Writes the log to standard output as JSON Lines, one record per line in LSN order,
            with every field of every event (docs/log-format.md §13), so freshet import can
            rebuild the store. --redact replaces the named fields of rows and JSON bodies, at
            any depth, with "[redacted]"; request headers that can carry credentials
            (Authorization, Cookie, names with token, secret, api-key, password, session) are
            always redacted. A compacted store's checkpoint is written with its state (its
            rows redacted too). Share a redacted export with a bug report.
            exit status: 0 ok, 1 unreadable records (skipped), 2 usage error, unreadable store
            or --from past the end
            """,
        "import": """
            usage: freshet import DIR FILE [--through LSN]
            Builds a new store in DIR (which must not exist or be empty) from JSON Lines written
            by freshet export; FILE - reads standard input. Records keep their LSNs and
            timestamps and are folded with the store's own fold, so the new store replays and
            verifies like the original. A checkpoint line (a compacted store) is the starting
            state, as replay uses it. --through stops after that LSN (not between a
            checkpoint's throughLSN and the checkpoint). Lines may end in \\r\\n. Every line is
            checked before anything is written; a bad line is named by its number. A record
            only the fold refuses (a confirmation of a mutation never proposed) is found while
            writing: then what import created is removed. New directories are mode 0700.
            LSNs must run on by one (the file may start anywhere: export --from writes a tail),
            except where a checkpoint in the file accounts for the gap (before its throughLSN).
            Times must lie in the years 0001 to 9999.
            exit status: 0 ok, 2 usage error, a bad line (row values must be JSON), an unknown
            kind, LSNs missing, nothing to import, --through before a checkpoint or past the
            end, or a path that is a file or a directory that is not empty
            """,
        "help": """
            usage: freshet help [COMMAND]
            Prints the overview, or one command's usage (same as freshet COMMAND --help).
            """,
    ]
}
