import Foundation
import GRDB

/// Statement arguments made from `DatabaseValue`s directly.
///
/// An array literal of arguments (`[domain.rawValue, key, data]`) is an array of
/// `(any DatabaseValueConvertible)?` existentials, each boxed and then converted: ~10,000
/// instructions of a durable `Write` went into building its four statements' arguments that
/// way (callgrind, issue 22). The write path builds them from values of known type instead.
enum BoundValues {
    /// The arguments `values`, in order.
    static func arguments(_ values: DatabaseValue...) -> StatementArguments {
        StatementArguments(values)
    }

    /// `bytes` as a blob, or NULL.
    static func blob(_ bytes: [UInt8]?) -> DatabaseValue {
        guard let bytes else { return .null }
        return Data(bytes).databaseValue
    }
}
