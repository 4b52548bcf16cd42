import AgentTracing
import HostscopeCore
import Testing

@Suite struct TypedSecretsTests {
    @Test func linesHoldingCredentialsLookSecret() {
        let scrubber = SecretScrubber()
        let lines = [
            "try password=hunter2 on db1", "token: abc123", "api_key=\"zzz\"", "curl https://me:pa55@example.org/x",
            "curl https://example.org/x?access_token=abcdef", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30",
            "the key is sk-proj-0123456789abcdefXYZ", "export GITHUB_TOKEN ghp_0123456789abcdefABCDEF",
            "AKIAIOSFODNN7EXAMPLE is in the log", "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXk",
            "what is aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1", "Basic dXNlcjpwYXNzd29yZA==",
        ]
        for line in lines {
            #expect(TypedSecrets.looksSecret(line, registered: scrubber), "\(line)")
        }
    }

    @Test func ordinaryQuestionsIdsAndPathsDoNot() {
        let scrubber = SecretScrubber()
        let lines = [
            "why is the disk on web01.example.com full?", "/trace 3fa2b1c4d5e6f708",
            "what does trace 4bf92f3577b34da6a3ce929d0e0e4736 say", "look at /var/log/nginx/access.log.2026-11-21",
            "the token bucket keeps refusing requests", "what is the password policy", "a basic question",
            "/export json /tmp/chat.json", "commit 1b00b60fe3d2c4a5b6c7d8e9f0a1b2c3d4e5f607 broke it",
        ]
        for line in lines {
            #expect(!TypedSecrets.looksSecret(line, registered: scrubber), "\(line)")
        }
    }

    @Test func aSecretTheProcessKnowsIsFoundWhereverItIs() {
        let scrubber = SecretScrubber()
        scrubber.register("correct horse battery")
        #expect(TypedSecrets.looksSecret("I set it to correct horse battery yesterday", registered: scrubber))
        #expect(!TypedSecrets.looksSecret("I set it yesterday", registered: scrubber))
    }
}
