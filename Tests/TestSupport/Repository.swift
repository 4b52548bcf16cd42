public import Foundation

/// Locations inside the source checkout, for tests that read fixtures or run scripts.
public enum Repository {
    /// The checkout's root directory (the one holding Package.swift).
    public static let root: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url
            }
        }
        fatalError("no Package.swift above \(#filePath)")
    }()

    /// `Fixtures/` in the checkout.
    public static var fixtures: URL { root.appendingPathComponent("Fixtures") }

    /// The shared folder beside the checkout, which exists in the workplace and CI but not in a
    /// user's clone; tests that use it skip that step when it is absent.
    public static var shared: URL? {
        let url = root.deletingLastPathComponent().appendingPathComponent("shared")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }

    /// The directory holding the built products (`hostscope`), next to the test bundle.
    public static var productsDirectory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }
}
