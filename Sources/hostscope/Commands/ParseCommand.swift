import ArgumentParser
import Foundation
import HostStats
import HostscopeCore
import OrderedJSON
import TerminalUI

struct ParseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract: "Turn a captured tool output into the matching part of the snapshot JSON.",
        discussion: """
            Reads FILE (or standard input with - or no file) and prints the snapshot sections the \
            tool's output yields: free → {"memory": …}, df → {"disks": …}, mpstat → {"cpu": …}. \
            Localized output (decimal commas, translated labels, 12-hour clocks) is accepted.

            Tools:
            \(ToolParser.all.map { "  \($0.name.padding(toLength: 16, withPad: " ", startingAt: 0))\($0.summary)" }.joined(separator: "\n"))
            """)

    @Argument(help: "The tool whose output this is.")
    var tool: String

    @Argument(help: "The file holding the output; - or nothing reads standard input.")
    var file: String?

    @Flag(help: "Print compact JSON on one line.")
    var compact = false

    func run() async throws {
        guard let parser = ToolParser.named(tool) else {
            throw Output.fail(
                "unknown tool \"\(tool)\"; run `hostscope parse --help` for the list (e.g. free, df, mpstat, proc-stat)",
                .usage)
        }
        let data: Data
        if let file, file != "-" {
            guard let contents = FileManager.default.contents(atPath: file) else {
                throw Output.fail("cannot read \(file): no such file or not readable", .failure)
            }
            data = contents
        } else {
            data = FileHandle.standardInput.readDataToEndOfFile()
        }
        let text = String(decoding: data, as: UTF8.self)
        do {
            let part = try parser.parse(text)
            let json = part.jsonValue
            Output.writeData((compact ? json.jsonString : json.prettyJSONString) + "\n")
        } catch {
            var message = "\(error.description)"
            if let other = ToolRecognizer.recognize(text), other != tool {
                message += " (it looks like \(other) output: try `hostscope parse \(other)`)"
            }
            throw Output.fail(message, .collect)
        }
    }
}
