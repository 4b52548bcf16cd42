import SSHTransport
public import ValueFormats

extension RemoteFileBrowser {
    /// Reads a regular file from its start and hands its bytes to `output` chunk by chunk, as a download over
    /// HTTP sends them: the file as it was when opened (one that grows is sent up to the size it had), never
    /// more than `maxBytes`. The file is opened with the checks of every read (a regular file only, inside the
    /// root, the handle confirmed) and closed on every way out, a cancelled or failed `output` included.
    ///
    /// - Returns: the bytes sent.
    /// - Throws: ``RemoteFilesError`` — `.invalidArgument` when the file is larger than `maxBytes`,
    ///   `.changedWhileReading` when it shrinks under the read; and what `output` throws.
    @discardableResult
    public func stream(_ path: RemotePath, maxBytes: UInt64, _ output: ([UInt8]) async throws -> Void)
        async throws -> UInt64
    {
        try await traced("get", path) { recorder in
            let (file, resolved, attributes) = try await openRegularFile(path)
            do {
                let sent = try await stream(file, resolved, size: attributes.size ?? 0, maxBytes: maxBytes, output)
                await file.close()
                recorder.bytes = sent
                return sent
            } catch {
                await file.close()
                throw error
            }
        }
    }

    private func stream(
        _ file: SFTPFile, _ resolved: Resolved, size: UInt64, maxBytes: UInt64, _ output: ([UInt8]) async throws -> Void
    ) async throws -> UInt64 {
        guard size <= maxBytes else {
            throw RemoteFilesError(
                .invalidArgument,
                "\(host): \(resolved.display.escaped) has \(size) bytes, more than the \(maxBytes) one download may have; copy it with hostscope files get"
            )
        }
        var offset: UInt64 = 0
        guard size > 0 else { return 0 }
        let stream = file.stream(readSize: 256 * 1024, chunkBytes: 512 * 1024)
        defer { stream.cancel() }
        while offset < size {
            let chunk: SFTPReadChunk
            do {
                guard let next = try await stream.next() else { break }
                chunk = next
            } catch {
                throw await explain(error, operation: "download", path: resolved.display, remote: resolved.remote)
            }
            let kept = Int(min(UInt64(chunk.count), size - offset))
            try await output(chunk.withUnsafeBytes { Array($0[..<kept]) })
            offset += UInt64(kept)
        }
        guard offset == size else {
            throw RemoteFilesError(
                .changedWhileReading,
                "\(host): \(resolved.display.escaped) shrank while it was sent (it had \(size) bytes, it ended at \(offset)); download it again"
            )
        }
        return offset
    }
}
