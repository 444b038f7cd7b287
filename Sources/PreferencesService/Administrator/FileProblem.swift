/// One problem found in a file, by line (0: the file as a whole).
struct FileProblem: Sendable, Equatable {
    /// The line's number, from 1.
    var line: Int
    /// What is wrong with it, and what happens to it.
    var message: String
}
