/// The keywords the OpenSSH client knows. `ssh` stops at any other (unless `IgnoreUnknown` covers it), and so
/// does hostscope; keywords in these lists that hostscope does not use are read and passed over silently.
enum OpenSSHKeywords {
    /// OpenSSH 9.2's `readconf.c` keyword table (Debian 12), deprecated and unsupported entries included.
    static let openSSH92: Set<String> = [
        "addkeystoagent", "addressfamily", "afstokenpassing", "batchmode", "bindaddress", "bindinterface",
        "canonicaldomains", "canonicalizefallbacklocal", "canonicalizehostname", "canonicalizemaxdots",
        "canonicalizepermittedcnames", "casignaturealgorithms", "certificatefile",
        "challengeresponseauthentication", "checkhostip", "cipher", "ciphers", "clearallforwardings",
        "compression", "compressionlevel", "connectionattempts", "connecttimeout", "controlmaster", "controlpath",
        "controlpersist", "dsaauthentication", "dynamicforward", "enableescapecommandline", "enablesshkeysign",
        "escapechar", "exitonforwardfailure", "fallbacktorsh", "fingerprinthash", "forkafterauthentication",
        "forwardagent", "forwardx11", "forwardx11timeout", "forwardx11trusted", "gatewayports",
        "globalknownhostsfile", "globalknownhostsfile2", "gssapiauthentication", "gssapidelegatecredentials",
        "hashknownhosts", "host", "hostbasedacceptedalgorithms", "hostbasedauthentication", "hostbasedkeytypes",
        "hostkeyalgorithms", "hostkeyalias", "hostname", "identitiesonly", "identityagent", "identityfile",
        "identityfile2", "ignoreunknown", "include", "ipqos", "kbdinteractiveauthentication",
        "kbdinteractivedevices", "keepalive", "kerberosauthentication", "kerberostgtpassing", "kexalgorithms",
        "knownhostscommand", "localcommand", "localforward", "loglevel", "logverbose", "macs", "match",
        "nohostauthenticationforlocalhost", "numberofpasswordprompts", "passwordauthentication",
        "permitlocalcommand", "permitremoteopen", "pkcs11provider", "port", "preferredauthentications", "protocol",
        "proxycommand", "proxyjump", "proxyusefdpass", "pubkeyacceptedalgorithms", "pubkeyacceptedkeytypes",
        "pubkeyauthentication", "rekeylimit", "remotecommand", "remoteforward", "requesttty", "requiredrsasize",
        "revokedhostkeys", "rhostsauthentication", "rhostsrsaauthentication", "rsaauthentication",
        "securitykeyprovider", "sendenv", "serveralivecountmax", "serveraliveinterval", "sessiontype", "setenv",
        "skeyauthentication", "smartcarddevice", "stdinnull", "streamlocalbindmask", "streamlocalbindunlink",
        "stricthostkeychecking", "syslogfacility", "tcpkeepalive", "tisauthentication", "tunnel", "tunneldevice",
        "updatehostkeys", "useprivilegedport", "user", "userknownhostsfile", "userknownhostsfile2", "useroaming",
        "usersh", "verifyhostkeydns", "visualhostkey", "xauthlocation",
    ]

    /// Keywords later OpenSSH releases added (up to 10.x): a config written for a newer `ssh` is not
    /// refused for them, since they are not typos.
    static let addedAfter92: Set<String> = [
        "channeltimeout", "obscurekeystroketiming", "refuseconnection", "tag", "versionaddendum", "warnweakcrypto",
    ]

    static let all = openSSH92.union(addedAfter92)

    /// Keywords OpenSSH 9.2 reads but no longer supports, saying so on every run ("Unsupported option").
    /// Debian builds `ssh` with GSSAPI and PKCS#11, so those keywords are supported there.
    static let unsupported: Set<String> = [
        "afstokenpassing", "compressionlevel", "kerberosauthentication", "kerberostgtpassing",
        "rhostsrsaauthentication", "rsaauthentication",
    ]
}
