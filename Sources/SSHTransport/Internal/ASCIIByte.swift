/// The ASCII bytes the ssh_config and known_hosts syntaxes are made of, which both are read as bytes.
enum ASCIIByte {
    static let tab: UInt8 = 0x09
    static let lf: UInt8 = 0x0A
    static let formFeed: UInt8 = 0x0C
    static let cr: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let doubleQuote: UInt8 = 0x22
    static let hash: UInt8 = 0x23
    static let singleQuote: UInt8 = 0x27
    static let equals: UInt8 = 0x3D
    static let at: UInt8 = 0x40
    static let backslash: UInt8 = 0x5C
}
