/// Reads `/sys/class/net/DEVICE/ATTRIBUTE` files as `grep -sH '' …` prints them
/// (`/sys/class/net/eth0/mtu:1500`) into each device's attributes. A file the kernel refused
/// (`speed` of a link that is down gives `EINVAL`) prints nothing and is left out. A file of the
/// device's `statistics/` directory keeps that prefix (`statistics/rx_nohandler`).
public enum NetClassParser {
    public static func parse(_ text: String) -> [NetworkDeviceClass] {
        var devices: [NetworkDeviceClass] = []
        var positions: [String: Int] = [:]
        let prefix = "/sys/class/net/"
        for line in TextScanning.lines(text) where line.hasPrefix(prefix) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let path = line[line.index(line.startIndex, offsetBy: prefix.count)..<colon]
            guard let slash = path.lastIndex(of: "/") else { continue }
            var device = String(path[..<slash])
            var attribute = String(path[path.index(after: slash)...])
            if device.hasSuffix("/statistics") {
                device.removeLast("/statistics".count)
                attribute = "statistics/" + attribute
            }
            guard !device.isEmpty, !device.contains("/") else { continue }
            let value = String(line[line.index(after: colon)...])
            if let position = positions[device] {
                devices[position].attributes[attribute] = value
            } else {
                positions[device] = devices.count
                devices.append(NetworkDeviceClass(device: device, attributes: [attribute: value]))
            }
        }
        return devices
    }
}
