/// The hostscope release this build reports in `--version`, spans and User-Agent headers.
public enum HostscopeVersion {
    public static let string = "0.1.0"
}
