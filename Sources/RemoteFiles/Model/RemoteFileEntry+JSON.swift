import Foundation
public import OrderedJSON
import ValueFormats

extension RemoteFileEntry {
    /// The entry as a Files JSON object: `name`, `path`, `type`, `size`, `mode`, `uid`, `gid`,
    /// `mtime`, `link_target`, in that order.
    ///
    /// A byte string that is not valid UTF-8 (a name, a path, a link target) is written in the
    /// escaped form of ``RemotePath`` and followed by `<key>_bytes_base64` (its exact bytes) and
    /// `<key>_is_utf8: false`; those two keys appear only then.
    public var jsonObject: JSONObject {
        var object = JSONObject()
        Self.appendBytes("name", name, to: &object)
        Self.appendBytes("path", path.bytes, to: &object)
        object.append("type", .string(type.rawValue))
        object.append("size", size.map { .uint($0) } ?? .null)
        object.append("mode", modeText.map { .string($0) } ?? .null)
        object.append("uid", uid.map { .uint(UInt64($0)) } ?? .null)
        object.append("gid", gid.map { .uint(UInt64($0)) } ?? .null)
        object.append(
            "mtime", modificationTime.map { .string(RFC3339.format(secondsSince1970: Int64($0))) } ?? .null)
        if let linkTarget {
            Self.appendBytes("link_target", linkTarget, to: &object)
        } else {
            object.append("link_target", .null)
        }
        return object
    }

    public var jsonValue: JSONValue { .object(jsonObject) }

    /// Appends `key` as text: the UTF-8 string itself, or the escaped form plus the raw bytes.
    static func appendBytes(_ key: String, _ bytes: [UInt8], to object: inout JSONObject) {
        if let text = String(validating: bytes, as: UTF8.self) {
            object.append(key, .string(text))
        } else {
            object.append(key, .string(EscapedText.encode(bytes)))
            object.append(key + "_bytes_base64", .string(Data(bytes).base64EncodedString()))
            object.append(key + "_is_utf8", .bool(false))
        }
    }
}

extension RemoteFileTree {
    /// The entry's Files JSON object with `children` (directories that were read) and `error`
    /// (directories that could not be) after its keys.
    public var jsonValue: JSONValue {
        var object = entry.jsonObject
        if let children { object.append("children", .array(children.map(\.jsonValue))) }
        if let error { object.append("error", .string(error.message)) }
        return .object(object)
    }
}
