import GRDB

/// The database schema, as a list of versioned migrations.
///
/// Migrations are append-only: a released one is never edited, a change is a new migration.
/// GRDB records the applied identifiers in `grdb_migrations`, so a file written by a newer
/// hostscope (with identifiers this one does not know) is recognised and left alone.
enum StorageSchema {
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("1-snapshot-records") { db in
            // collected_at is milliseconds since the Unix epoch (UTC), the precision of the
            // RFC 3339 stamps in the JSON; integers compare and index faster than text.
            try db.execute(
                sql: """
                    CREATE TABLE snapshot_record (
                        id INTEGER PRIMARY KEY,
                        host TEXT NOT NULL,
                        collected_at INTEGER NOT NULL,
                        kind TEXT NOT NULL CHECK (kind IN ('snapshot', 'error')),
                        error_kind TEXT,
                        cpu_busy_percent REAL,
                        memory_used_percent REAL,
                        load_1m REAL,
                        disk_max_used_percent REAL,
                        json TEXT NOT NULL
                    );
                    CREATE INDEX snapshot_record_host_time ON snapshot_record (host, collected_at);
                    CREATE INDEX snapshot_record_time ON snapshot_record (collected_at);
                    """)
        }
        migrator.registerMigration("2-spans") { db in
            // status_code keeps OTLP's values (0 unset, 1 ok, 2 error); times are Unix nanoseconds.
            try db.execute(
                sql: """
                    CREATE TABLE span (
                        id INTEGER PRIMARY KEY,
                        span_id TEXT NOT NULL UNIQUE,
                        trace_id TEXT NOT NULL,
                        parent_span_id TEXT,
                        name TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        start_unix_nano INTEGER NOT NULL,
                        end_unix_nano INTEGER NOT NULL,
                        status_code INTEGER NOT NULL,
                        host TEXT,
                        service TEXT,
                        json TEXT NOT NULL
                    );
                    CREATE INDEX span_trace ON span (trace_id);
                    CREATE INDEX span_start ON span (start_unix_nano);
                    """)
        }
        migrator.registerMigration("3-meta") { db in
            // No declared type on value: integers stay integers and text stays text.
            try db.execute(
                sql: """
                    CREATE TABLE meta (
                        key TEXT PRIMARY KEY NOT NULL,
                        value
                    ) WITHOUT ROWID;
                    """)
        }
        return migrator
    }()
}
