import HostscopeCore
import OrderedJSON
public import RemoteFiles
import ValueFormats

/// Text renderings of `hostscope files` results.
public enum FilesText {
    /// `-rw-r--r--  owner    group          12 2024-05-06T07:08:09Z name -> target`; names escaped,
    /// and the owner and group too: they are whatever text the server put in its long listing.
    ///
    /// With `humanSizes`, the size as `ls -lh` prints it (`4.0K`, `12M`); with `classify`, the name marked
    /// as `ls -lF` marks it (`/` directories, `*` executables, `|` FIFOs, `=` sockets; a link shows its
    /// target instead, as stored).
    public static func longLine(_ entry: RemoteFileEntry, humanSizes: Bool = false, classify: Bool = false) -> String {
        let owner = entry.owner.map(TerminalText.sanitize) ?? entry.uid.map(String.init) ?? "?"
        let group = entry.group.map(TerminalText.sanitize) ?? entry.gid.map(String.init) ?? "?"
        let size = entry.size.map { humanSizes ? FigureText.humanSize($0) : String($0) } ?? "?"
        let time = entry.jsonObject["mtime"]?.stringValue ?? "?"
        var line =
            entry.permissionsText + "  " + pad(owner, 8) + " " + pad(group, 8) + " "
            + TerminalText.padded(size, to: humanSizes ? 5 : 12, right: true) + " " + time + " " + entry.escapedName
        if let target = entry.linkTarget {
            line += " -> " + EscapedText.encode(target)
        } else if classify {
            line += entry.typeIndicator
        }
        return line
    }

    /// The name as `ls` prints it, with `classify` marked as `ls -F` marks it (`/` directories, `@` links,
    /// `*` executables, `|` FIFOs, `=` sockets).
    public static func shortLine(_ entry: RemoteFileEntry, classify: Bool = false) -> String {
        entry.escapedName + (classify ? entry.typeIndicator : "")
    }

    public static func stat(_ entry: RemoteFileEntry) -> String {
        var lines: [(String, String)] = [
            ("path", entry.path.escaped),
            ("type", entry.type.rawValue + (entry.type == .other ? " (\(entry.detailedType))" : "")),
            ("size", entry.size.map(String.init) ?? "?"),
            ("mode", (entry.modeText ?? "?") + " (" + entry.permissionsText + ")"),
            ("uid", entry.uid.map(String.init) ?? "?"), ("gid", entry.gid.map(String.init) ?? "?"),
            ("mtime", entry.jsonObject["mtime"]?.stringValue ?? "?"),
        ]
        if let target = entry.linkTarget { lines.append(("link_target", EscapedText.encode(target))) }
        let width = lines.map(\.0.count).max() ?? 0
        return lines.map { pad($0.0 + ":", width + 1) + " " + $0.1 + "\n" }.joined()
    }

    /// `tree`'s drawing, with errors inline and a count at the end.
    public static func tree(_ tree: RemoteFileTree) -> String {
        var out = tree.entry.path.escaped + suffix(tree) + "\n"
        var directories = 0
        var files = 0
        func draw(_ children: [RemoteFileTree], prefix: String) {
            for (index, child) in children.enumerated() {
                let last = index == children.count - 1
                out += prefix + (last ? "└── " : "├── ") + child.entry.escapedName + suffix(child) + "\n"
                if child.entry.type == .dir || child.children != nil { directories += 1 } else { files += 1 }
                if let grandchildren = child.children {
                    draw(grandchildren, prefix: prefix + (last ? "    " : "│   "))
                }
            }
        }
        draw(tree.children ?? [], prefix: "")
        out +=
            "\n\(directories) \(directories == 1 ? "directory" : "directories"), \(files) \(files == 1 ? "file" : "files")\n"
        return out
    }

    private static func suffix(_ node: RemoteFileTree) -> String {
        var text = ""
        if let target = node.entry.linkTarget { text += " -> " + EscapedText.encode(target) }
        if let error = node.error { text += "  [" + TerminalText.sanitize(error.message) + "]" }
        return text
    }

    /// What `cat` shows for binary content.
    public static func binarySummary(_ preview: FilePreview, shown: String) -> String {
        var text = "\(TerminalText.sanitize(shown)): binary, \(preview.fileSize) bytes"
        if let guess = preview.typeGuess { text += ", looks like \(guess)" }
        text += "\n"
        let sample = Array(preview.bytes.prefix(64))
        text += ContentSniffer.hexDump(sample, base: preview.offset).joined(separator: "\n") + "\n"
        text +=
            "(first \(sample.count) bytes shown; use --raw with output to a file or pipe, or hostscope files get, for the content)\n"
        return text
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
