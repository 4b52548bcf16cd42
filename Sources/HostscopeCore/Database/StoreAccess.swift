import Storage

/// How a reading entry point reaches the database: opened for one call and closed after it (a command), or
/// one the caller keeps open (a long-running service).
enum StoreAccess: Sendable {
    /// Open the file for each call, reading only: a missing file is ``CoreError/Code/notFound`` with
    /// `missing` as its sentence.
    case perCall(path: String, missing: String, diagnostics: Diagnostics)
    /// A database the caller opened and closes.
    case shared(StorageDatabase)

    /// The database of `settings`, opened for each call; `missing` says what a missing file means, given
    /// its path.
    init(settings: CoreSettings, missing: (String) -> String) {
        let path = settings.databasePath
        self = .perCall(path: path, missing: missing(path), diagnostics: settings.diagnostics)
    }

    /// The database file.
    var path: String {
        switch self {
        case .perCall(let path, _, _): path
        case .shared(let database): database.path
        }
    }

    /// Runs `body` with the database, closing it afterwards when it was opened for the call.
    func with<T: Sendable>(
        _ body: (StorageDatabase) async throws(CoreError) -> T
    ) async throws(CoreError) -> T {
        switch self {
        case .shared(let database):
            return try await body(database)
        case .perCall(let path, let missing, let diagnostics):
            let database: StorageDatabase
            do {
                database = try await StorageDatabase.open(at: path, mode: .existingOnly)
            } catch  where error.code == .notFound {
                throw CoreError(.notFound, missing)
            } catch {
                throw CoreError(.failed, error.message)
            }
            database.accessNotes.forEach(diagnostics.note)
            do {
                let result = try await body(database)
                try? await database.close()
                return result
            } catch {
                try? await database.close()
                throw error
            }
        }
    }
}
