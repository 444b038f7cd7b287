import GRDB
import GRDBSQLite

/// A value bound to one parameter of a statement the writer runs through SQLite's C API.
enum StatementParameter {
    /// Bound as text (its UTF-8 bytes, NULs included).
    case text(String)
    /// Bound as a blob; `nil` binds NULL, an empty array the empty blob.
    case blob([UInt8]?)
    /// Bound as a 64-bit integer.
    case integer(Int64)
}

/// The writer's statements run once per key of every commit: upsert, delete, the previous
/// value's read and the journal's row. They run straight through SQLite's C API on GRDB's
/// prepared statement, because `execute(arguments:)` boxes each argument in a
/// `DatabaseValue`, validates and binds them, a tenth of a one-key write's instructions
/// (docs/benchmarks.md). The writer's other statements (BEGIN, COMMIT, the journal's
/// trimming) stay with GRDB.
extension Statement {
    /// Runs the statement to its end with `parameters` bound in order.
    /// - Throws: `DatabaseError` as GRDB's `execute` would (a full disk is `SQLITE_FULL`).
    func run(_ parameters: [StatementParameter]) throws {
        try stepOnce(parameters) { _, code in
            guard code == SQLITE_DONE else { throw failure(code) }
        }
    }

    /// The first column of the first row the statement gives with `parameters` bound, as
    /// bytes; `nil` when there is no row or the column is NULL.
    /// - Throws: `DatabaseError` when SQLite fails.
    func firstBlob(_ parameters: [StatementParameter]) throws -> [UInt8]? {
        try stepOnce(parameters) { statement, code in
            if code == SQLITE_DONE { return nil }
            guard code == SQLITE_ROW else { throw failure(code) }
            guard sqlite3_column_type(statement, 0) != SQLITE_NULL else { return nil }
            let count = Int(sqlite3_column_bytes(statement, 0))
            guard count > 0, let bytes = sqlite3_column_blob(statement, 0) else { return [] }
            return Array(UnsafeRawBufferPointer(start: bytes, count: count))
        }
    }

    /// Binds `parameters`, steps once, hands the step's result code to `body`, then resets
    /// the statement and clears its bindings whatever happened.
    private func stepOnce<Result>(
        _ parameters: [StatementParameter], _ body: (SQLiteStatement, Int32) throws -> Result
    ) throws -> Result {
        let statement = sqliteStatement
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        // SQLite copies each value as it binds it (SQLITE_TRANSIENT).
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (offset, parameter) in parameters.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch parameter {
            case .text(let text) where text.isEmpty:
                code = sqlite3_bind_text(statement, index, "", 0, transient)
            case .text(var text):
                code = text.withUTF8 { sqlite3_bind_text(statement, index, $0.baseAddress, Int32($0.count), transient) }
            case .blob(nil):
                code = sqlite3_bind_null(statement, index)
            case .blob(let bytes?) where bytes.isEmpty:
                code = sqlite3_bind_zeroblob(statement, index, 0)
            case .blob(let bytes?):
                code = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), transient) }
            case .integer(let integer):
                code = sqlite3_bind_int64(statement, index, integer)
            }
            guard code == SQLITE_OK else { throw failure(code) }
        }
        return try body(statement, sqlite3_step(statement))
    }

    /// The error SQLite reports for `code`, a result of stepping this statement, as GRDB
    /// would throw it.
    func failure(_ code: Int32) -> DatabaseError {
        let message = sqlite3_db_handle(sqliteStatement).map { String(cString: sqlite3_errmsg($0)) }
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
    }
}
