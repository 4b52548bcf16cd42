import ValueFormats

/// Tells text from binary and guesses what a binary file is, from its first bytes.
public enum ContentSniffer {
    /// How many leading bytes the decision looks at.
    public static let sampleSize = 8192

    /// Whether `sample` (a file's first bytes) looks binary: it holds a NUL byte, as git and
    /// grep decide, or more than one byte in ten is a control character that text does not use.
    public static func isBinary(_ sample: ArraySlice<UInt8>) -> Bool {
        let window = sample.prefix(sampleSize)
        if window.contains(0) { return true }
        guard !window.isEmpty else { return false }
        var controls = 0
        for byte in window {
            switch byte {
            case 0x07...0x0D, 0x1B: continue  // bell, backspace, tab, newlines, form feed, escape
            case 0x00..<0x20, 0x7F: controls += 1
            default: continue
            }
        }
        return controls * 10 > window.count
    }

    public static func isBinary(_ sample: [UInt8]) -> Bool { isBinary(sample[...]) }

    /// A few words on what a binary file is, from its magic number; `nil` when unknown.
    public static func typeGuess(_ sample: [UInt8]) -> String? {
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            sample.count >= offset + magic.count && Array(sample[offset..<offset + magic.count]) == magic
        }
        func ascii(_ text: String, at offset: Int = 0) -> Bool { starts(Array(text.utf8), at: offset) }
        if starts([0x7F, 0x45, 0x4C, 0x46]) {
            let kind: String
            switch sample.count > 17 ? sample[16] : 0 {
            case 1: kind = "relocatable"
            case 2: kind = "executable"
            case 3: kind = "shared object"
            case 4: kind = "core file"
            default: kind = "file"
            }
            let bits = sample.count > 4 && sample[4] == 2 ? "64-bit" : "32-bit"
            return "ELF \(bits) \(kind)"
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "PNG image" }
        if starts([0xFF, 0xD8, 0xFF]) { return "JPEG image" }
        if ascii("GIF87a") || ascii("GIF89a") { return "GIF image" }
        if ascii("RIFF") && ascii("WEBP", at: 8) { return "WebP image" }
        if ascii("%PDF-") { return "PDF document" }
        if starts([0x1F, 0x8B]) { return "gzip compressed data" }
        if starts([0x28, 0xB5, 0x2F, 0xFD]) { return "Zstandard compressed data" }
        if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return "xz compressed data" }
        if ascii("BZh") { return "bzip2 compressed data" }
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) { return "Zip archive" }
        if starts([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return "7-zip archive" }
        if ascii("ustar", at: 257) { return "tar archive" }
        if ascii("SQLite format 3\0") { return "SQLite 3 database" }
        if starts([0x00, 0x61, 0x73, 0x6D]) { return "WebAssembly module" }
        if starts([0xCF, 0xFA, 0xED, 0xFE]) || starts([0xCE, 0xFA, 0xED, 0xFE]) { return "Mach-O binary" }
        if starts([0xCA, 0xFE, 0xBA, 0xBE]) { return "Mach-O universal binary or Java class" }
        if ascii("MZ") { return "DOS/Windows executable" }
        if ascii("!<arch>\n") { return "ar archive (.a, .deb)" }
        if starts([0xED, 0xAB, 0xEE, 0xDB]) { return "RPM package" }
        if ascii("OggS") { return "Ogg media" }
        if ascii("ID3") || starts([0xFF, 0xFB]) { return "MP3 audio" }
        if ascii("ftyp", at: 4) { return "MP4/QuickTime media" }
        return nil
    }

    /// `hexdump -C`-style lines for `bytes`, starting at offset `base`.
    public static func hexDump(_ bytes: [UInt8], base: UInt64 = 0) -> [String] {
        func hex(_ value: UInt64, width: Int) -> String { Hex.string(value, width: width) }
        var lines: [String] = []
        for start in stride(from: 0, to: bytes.count, by: 16) {
            let row = bytes[start..<min(bytes.count, start + 16)]
            var line = hex(base + UInt64(start), width: 8) + "  "
            for (index, byte) in row.enumerated() {
                line += hex(UInt64(byte), width: 2) + (index == 7 ? "  " : " ")
            }
            if row.count < 16 {
                line += String(repeating: "   ", count: 16 - row.count) + (row.count <= 7 ? " " : "")
            }
            line += " |" + String(row.map { (0x20...0x7E).contains($0) ? Character(Unicode.Scalar($0)) : "." }) + "|"
            lines.append(line)
        }
        return lines
    }
}
