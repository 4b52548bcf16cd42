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
        migrator.registerMigration("4-chat") { db in
            // Conversations of `hostscope chat`. Times are milliseconds since the Unix epoch (UTC). No column
            // holds a credential: API keys stay in the environment or the credentials file they came from.
            try db.execute(
                sql: """
                    CREATE TABLE chat_session (
                        id TEXT PRIMARY KEY NOT NULL,
                        host TEXT NOT NULL,
                        provider TEXT NOT NULL,
                        model TEXT NOT NULL,
                        base_url TEXT,
                        system_prompt TEXT,
                        root TEXT,
                        gateway_session_id TEXT,
                        title TEXT,
                        created_at INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL,
                        turns INTEGER NOT NULL DEFAULT 0,
                        input_tokens INTEGER NOT NULL DEFAULT 0,
                        output_tokens INTEGER NOT NULL DEFAULT 0,
                        cost_usd REAL
                    );
                    CREATE INDEX chat_session_updated ON chat_session (updated_at);
                    CREATE TABLE chat_message (
                        session_id TEXT NOT NULL REFERENCES chat_session (id) ON DELETE CASCADE,
                        position INTEGER NOT NULL,
                        role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
                        content TEXT NOT NULL,
                        tool_calls TEXT,
                        tool_call_id TEXT,
                        tool_name TEXT,
                        is_error INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (session_id, position)
                    ) WITHOUT ROWID;
                    CREATE TABLE chat_tool_call (
                        session_id TEXT NOT NULL REFERENCES chat_session (id) ON DELETE CASCADE,
                        position INTEGER NOT NULL,
                        turn INTEGER NOT NULL,
                        call_id TEXT NOT NULL,
                        name TEXT NOT NULL,
                        input TEXT NOT NULL,
                        status TEXT NOT NULL,
                        runs_remotely INTEGER NOT NULL DEFAULT 0,
                        duration_ms REAL,
                        exit_code INTEGER,
                        output TEXT,
                        output_bytes INTEGER,
                        was_cut INTEGER NOT NULL DEFAULT 0,
                        trace_id TEXT,
                        span_id TEXT,
                        PRIMARY KEY (session_id, position)
                    ) WITHOUT ROWID;
                    CREATE INDEX chat_tool_call_span ON chat_tool_call (span_id);
                    CREATE TABLE chat_turn (
                        session_id TEXT NOT NULL REFERENCES chat_session (id) ON DELETE CASCADE,
                        turn INTEGER NOT NULL,
                        model TEXT NOT NULL,
                        finish_reason TEXT NOT NULL,
                        model_calls INTEGER NOT NULL,
                        tool_calls INTEGER NOT NULL,
                        input_tokens INTEGER,
                        output_tokens INTEGER,
                        cost_usd REAL,
                        error_kind TEXT,
                        error_message TEXT,
                        trace_id TEXT,
                        span_id TEXT,
                        finished_at INTEGER NOT NULL,
                        PRIMARY KEY (session_id, turn)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("5-span-otlp") { db in
            // Each span's OTLP protobuf encoding, written with the span, so that `trace push` sends stored bytes
            // instead of reading the flat JSON back and encoding it again: otlp_span holds the fields of its
            // `Span` message, otlp_resource those of its `Resource` message. Both are NULL for the spans stored
            // before this migration, which a push reads from their JSON as before. export_request marks the
            // spans of hostscope's own OTLP requests, which a push leaves out; older rows have 0 and are told
            // apart by their JSON.
            try db.execute(
                sql: """
                    ALTER TABLE span ADD COLUMN otlp_span BLOB;
                    ALTER TABLE span ADD COLUMN otlp_resource BLOB;
                    ALTER TABLE span ADD COLUMN export_request INTEGER NOT NULL DEFAULT 0;
                    """)
        }
        migrator.registerMigration("6-alerts") { db in
            // alert_state holds the pending and firing alerts now, one row per alert (its labels' fingerprint),
            // so that a restart takes them back; alert_transition every move of an alert, for `alerts --history`.
            // Times are milliseconds since the Unix epoch; labels and annotations are JSON objects.
            try db.execute(
                sql: """
                    CREATE TABLE alert_state (
                        fingerprint TEXT PRIMARY KEY NOT NULL,
                        rule_key TEXT NOT NULL,
                        subject TEXT NOT NULL,
                        host TEXT NOT NULL,
                        name TEXT NOT NULL,
                        severity TEXT NOT NULL,
                        state TEXT NOT NULL,
                        value REAL NOT NULL,
                        active_at INTEGER NOT NULL,
                        fired_at INTEGER,
                        last_held_at INTEGER NOT NULL,
                        labels TEXT NOT NULL,
                        annotations TEXT NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE alert_transition (
                        id INTEGER PRIMARY KEY,
                        at INTEGER NOT NULL,
                        fingerprint TEXT NOT NULL,
                        host TEXT NOT NULL,
                        name TEXT NOT NULL,
                        severity TEXT NOT NULL,
                        from_state TEXT NOT NULL,
                        to_state TEXT NOT NULL,
                        value REAL NOT NULL,
                        labels TEXT NOT NULL,
                        annotations TEXT NOT NULL
                    );
                    CREATE INDEX alert_transition_time ON alert_transition (at);
                    """)
        }
        return migrator
    }()
}
