import Foundation

/// The lines of one known_hosts file, read as bytes the way OpenSSH's `hostkeys_foreach_file` reads them.
///
/// Lines end at LF. A CR before it, and other trailing blanks, are dropped: a file edited on Windows must
/// not hide an `@revoked` line behind its line endings. Bytes that are not UTF-8 (a Latin-1 comment) affect
/// only their own line.
struct KnownHostsFile: Sendable {
    /// A line that names keys: a plain entry for libssh2 to read, or one with a marker.
    struct Line: Sendable, Equatable {
        enum Marker: Sendable, Equatable {
            /// `@revoked`: the key is refused whatever else says.
            case revoked
            /// `@cert-authority`, or a marker OpenSSH does not know; hostscope uses neither.
            case other
        }

        var number: Int
        var marker: Marker?
        /// The line without trailing blanks (and, for a marked line, still with its marker).
        var text: [UInt8]
        /// For a marked line, the decoded key of its third field; nil when it is not base64.
        var markedKey: [UInt8]?
    }

    var path: String
    var lines: [Line]

    /// The file at `path`, or nil when it cannot be read; `ssh` passes over missing and unreadable files too.
    static func read(_ path: String) -> KnownHostsFile? {
        guard let data = FileManager.default.contents(atPath: path) else {
            return nil
        }
        return KnownHostsFile(path: path, lines: parse(Array(data)))
    }

    static func parse(_ bytes: [UInt8]) -> [Line] {
        contentLines(bytes).map { number, line in
            guard line.first == ASCIIByte.at else {
                return Line(number: number, marker: nil, text: Array(line), markedKey: nil)
            }
            let fields = fields(line)
            let marker: Line.Marker = fields.first.map(Array.init) == Array("@revoked".utf8) ? .revoked : .other
            // `@marker hosts keytype base64 [comment]`
            let key = fields.count >= 4 ? decodedKey(fields[3]) : nil
            return Line(number: number, marker: marker, text: Array(line), markedKey: key)
        }
    }

    /// The lines that hold something, numbered from 1 and trimmed: not blank, not a `#` comment. The same
    /// reading serves known_hosts and RevokedHostKeys files.
    static func contentLines(_ bytes: [UInt8]) -> [(number: Int, text: ArraySlice<UInt8>)] {
        var lines: [(number: Int, text: ArraySlice<UInt8>)] = []
        for (index, raw) in bytes.split(separator: ASCIIByte.lf, omittingEmptySubsequences: false).enumerated() {
            var line = raw[...]
            while let last = line.last, last == ASCIIByte.cr || last == ASCIIByte.space || last == ASCIIByte.tab {
                line = line.dropLast()
            }
            line = line.drop { $0 == ASCIIByte.space || $0 == ASCIIByte.tab }
            guard let first = line.first, first != ASCIIByte.hash else { continue }
            lines.append((index + 1, line))
        }
        return lines
    }

    /// A line's blank-separated fields.
    static func fields(_ line: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        line.split(whereSeparator: { $0 == ASCIIByte.space || $0 == ASCIIByte.tab })
    }

    /// The key blob of a base64 field, or nil when the field is not base64.
    static func decodedKey(_ field: ArraySlice<UInt8>) -> [UInt8]? {
        Data(base64Encoded: Data(field)).map(Array.init)
    }
}
