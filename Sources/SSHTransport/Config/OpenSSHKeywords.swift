/// Every keyword the OpenSSH client knows, from 9.2 on (deprecated and unsupported ones
/// included): `ssh` refuses any other, so hostscope warns about them instead of staying silent.
enum OpenSSHKeywords {
    static let all: Set<String> = [
        "addkeystoagent", "addressfamily", "afstokenpassing", "batchmode", "bindaddress", "bindinterface",
        "canonicaldomains", "canonicalizefallbacklocal", "canonicalizehostname", "canonicalizemaxdots",
        "canonicalizepermittedcnames", "casignaturealgorithms", "certificatefile",
        "challengeresponseauthentication", "channeltimeout", "checkhostip", "cipher", "ciphers",
        "clearallforwardings", "compression", "compressionlevel", "connectionattempts", "connecttimeout",
        "controlmaster", "controlpath", "controlpersist", "dsaauthentication", "dynamicforward",
        "enableescapecommandline", "enablesshkeysign", "escapechar", "exitonforwardfailure", "fallbacktorsh",
        "fingerprinthash", "forkafterauthentication", "forwardagent", "forwardx11", "forwardx11timeout",
        "forwardx11trusted", "gatewayports", "globalknownhostsfile", "globalknownhostsfile2",
        "gssapiauthentication", "gssapidelegatecredentials", "hashknownhosts", "host",
        "hostbasedacceptedalgorithms", "hostbasedauthentication", "hostbasedkeytypes", "hostkeyalgorithms",
        "hostkeyalias", "hostname", "identitiesonly", "identityagent", "identityfile", "identityfile2",
        "ignoreunknown", "include", "ipqos", "kbdinteractiveauthentication", "kbdinteractivedevices", "keepalive",
        "kerberosauthentication", "kerberostgtpassing", "kexalgorithms", "knownhostscommand", "localcommand",
        "localforward", "loglevel", "logverbose", "macs", "match", "nohostauthenticationforlocalhost",
        "numberofpasswordprompts", "obscurekeystroketiming", "passwordauthentication", "permitlocalcommand",
        "permitremoteopen", "pkcs11provider", "port", "preferredauthentications", "protocol", "proxycommand",
        "proxyjump", "proxyusefdpass", "pubkeyacceptedalgorithms", "pubkeyacceptedkeytypes", "pubkeyauthentication",
        "refuseconnection", "rekeylimit", "remotecommand", "remoteforward", "requesttty", "requiredrsasize",
        "revokedhostkeys", "rhostsauthentication", "rhostsrsaauthentication", "rsaauthentication",
        "securitykeyprovider", "sendenv", "serveralivecountmax", "serveraliveinterval", "sessiontype", "setenv",
        "skeyauthentication", "smartcarddevice", "stdinnull", "streamlocalbindmask", "streamlocalbindunlink",
        "stricthostkeychecking", "syslogfacility", "tag", "tcpkeepalive", "tisauthentication", "tunnel",
        "tunneldevice", "updatehostkeys", "useprivilegedport", "user", "userknownhostsfile", "userknownhostsfile2",
        "useroaming", "usersh", "verifyhostkeydns", "versionaddendum", "visualhostkey", "warnweakcrypto",
        "xauthlocation",
    ]
}
