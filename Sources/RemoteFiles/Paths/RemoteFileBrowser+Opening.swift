import SSHTransport
import ValueFormats

// Opening by name over SFTP v3, where a name can change between any two requests.
//
// SFTP v3 has no `openat`, no `O_NOFOLLOW`, no `O_NONBLOCK` and no inode number: the server opens
// whatever a name leads to when the OPEN request arrives. A user who may write in the workspace
// can exchange a name for a symbolic link (or a directory on the way for a link to a directory)
// between the browser's `realpath` and its `open`, so a path checked inside `--root` can be
// opened outside it. The browser therefore opens in this order and refuses on any mismatch:
//
// 1. resolve the path (`realpath`) and check that it lies inside the root;
// 2. `lstat` the resolved path: a directory, FIFO, device, socket or link is refused here, before
//    anything is opened (opening a FIFO would block the server until a writer comes);
// 3. open the resolved path (a directory: list it by that path, never by a name from a listing);
// 4. `fstat` the handle: still a regular file, with the same owner, group and mode as at step 2
//    and a size and time that did not go backwards;
// 5. ask where the handle leads (``HandleLocator``, the server's `/proc/self/fd`): it must be the
//    resolved path. Where the server cannot tell, resolve the name and `lstat` it again instead:
//    the resolution must be unchanged and the attributes those of the handle.
//
// What remains, stated plainly:
// - A FIFO (or a device) put in place between step 2 and step 3, one round trip, still reaches
//   the server's `open()`, which then blocks until a writer opens the FIFO. hostscope gives up
//   when the request times out and says so, but the server's SFTP process stays blocked.
// - Without `/proc/self/fd` on the server, step 5 looks names up again. A link swapped in for
//   the last component is still caught (`lstat` does not follow it), unless the file outside
//   has the same owner, group, mode, size and time as the one in the workspace — which takes
//   a file owned by the outside file's owner, so an attacker who is not that owner (or root)
//   cannot forge it. A link swapped in for a *directory on the way* is followed by `lstat` and
//   `open` alike, and only the `realpath` before and after stand against it: a user exchanging
//   that directory in a tight loop got an outside file into about one `grep -r` in ten in the
//   tests, and an outside name into a tree about once in 150.
// - A directory listing's names come from the handle (confirmed at step 5), but the attributes
//   the server sends for each entry are an `lstat` of the entry's name at listing time, and
//   `stat` describes a name by its resolved parent: with a directory on the way swapped at that
//   moment, they can be the attributes of an entry of the same name outside (never its content).
// - Hard links are the file itself: a hard link in the workspace to a file outside is inside.
//
// What closes all of them on the server: a workspace that no other user can write to, or
// `ChrootDirectory` with `ForceCommand internal-sftp -R` for the account hostscope uses, so
// that nothing outside the workspace exists for the SFTP server at all.

extension RemoteFileBrowser {
    /// Opens the regular file at `resolved` for reading and checks that the handle holds that
    /// file (see the comment at the top of this file).
    ///
    /// - Parameter followFinalLink: whether a symbolic link as the last component is followed
    ///   (a path the user named without `--root`); under a root, or for an entry of a walk,
    ///   it is not: the resolved path names the file itself.
    /// - Returns: the open file and its attributes as the handle reports them.
    func openVerifiedFile(_ resolved: Resolved, followFinalLink: Bool) async throws -> (SFTPFile, SFTPAttributes) {
        let follow = followFinalLink && root == nil
        let before: SFTPAttributes
        let file: SFTPFile
        let opened: SFTPAttributes
        do {
            before = try await session.stat(resolved.remote, followSymlinks: follow)
            if before.type == .symlink {
                // A link where the resolution found a file: a link to nowhere or a loop (explained
                // from the stat error below), or one swapped in since.
                _ = try await session.stat(resolved.remote)
                throw changed(resolved.display, "a symbolic link appeared in its place")
            }
            try checkRegular(before, resolved.display)
            do {
                file = try await session.openFile(resolved.remote)
            } catch let error as SSHError where error.code == .timeout {
                throw RemoteFilesError(
                    .timeout,
                    "\(host): opening \(resolved.display.escaped) did not finish in time; if it was swapped for a FIFO or a device just then, the SFTP server is now waiting on it: look at what replaces it, and connect again"
                )
            }
        } catch {
            throw await explain(error, operation: "read", path: resolved.display, remote: resolved.remote)
        }
        do {
            opened = try await file.attributes()
            try checkRegular(opened, resolved.display)
            guard Self.sameFile(before, opened) else {
                throw changed(resolved.display, "the opened file is not the one looked at just before")
            }
            if root != nil { try await confirmHandle(resolved, attributes: opened, directory: false) }
        } catch {
            await file.close()
            throw await explain(error, operation: "read", path: resolved.display, remote: resolved.remote)
        }
        return (file, opened)
    }

    /// Opens the directory at `resolved` for listing and, under a root, checks that the handle
    /// holds that directory (see the comment at the top of this file); `seen` is how it looked
    /// when it was resolved or listed, compared by the checks by name.
    func openVerifiedDirectory(_ resolved: Resolved, seen: SFTPAttributes?) async throws -> SFTPDirectory {
        let handle: SFTPDirectory
        do {
            handle = try await session.openDirectory(resolved.remote)
        } catch {
            throw await explain(error, operation: "list", path: resolved.display, remote: resolved.remote)
        }
        guard root != nil else { return handle }
        do {
            try await confirmHandle(resolved, attributes: seen, directory: true)
        } catch {
            await handle.close()
            throw await explain(error, operation: "list", path: resolved.display, remote: resolved.remote)
        }
        return handle
    }

    /// Step 5: where the handle just opened on `resolved.remote` leads; `attributes` are the
    /// handle's (a file) or those seen before the open (a directory).
    private func confirmHandle(_ resolved: Resolved, attributes: SFTPAttributes?, directory: Bool) async throws {
        switch await handles.confirm(resolved.remote, on: session) {
        case .confirmed:
            return
        case .elsewhere:
            throw changed(resolved.display, "the server's handle leads to another file")
        case .unavailable:
            // Checks by name: the resolution is unchanged, and the name's attributes are the handle's.
            let again = try await session.realpath(resolved.remote)
            guard again == resolved.remote else {
                if let root, !again.isWithin(root) { throw outsideRoot(resolved.display, resolved: again) }
                throw changed(resolved.display, "it now resolves to \(again.escaped)")
            }
            let now = try await session.stat(resolved.remote, followSymlinks: false)
            let same =
                directory
                ? now.type == .directory && attributes.map { Self.sameDirectory($0, now) } ?? true
                : attributes.map { Self.sameFile($0, now) } ?? false
            guard same else { throw changed(resolved.display, "another file took its name") }
        }
    }

    /// Whether `after` can be the file `before` described: the same type, owner, group and mode,
    /// and a size and modification time that did not go backwards.
    ///
    /// Size and time may grow (a log being written to stays readable), and may not identify a
    /// file anyway (an owner can set both); the owner cannot be forged by anyone but that owner
    /// or root. An attribute the server did not send is not compared.
    static func sameFile(_ before: SFTPAttributes, _ after: SFTPAttributes) -> Bool {
        func same<T: Equatable>(_ a: T?, _ b: T?) -> Bool { a == nil || b == nil || a == b }
        func notBack<T: Comparable>(_ a: T?, _ b: T?) -> Bool {
            guard let a, let b else { return true }
            return b >= a
        }
        return before.type == after.type && same(before.uid, after.uid) && same(before.gid, after.gid)
            && same(before.permissions, after.permissions) && notBack(before.size, after.size)
            && notBack(before.modificationTime, after.modificationTime)
    }

    /// Whether `after` can be the directory `before` described: the same type, owner, group and
    /// mode (its size and time change with its entries).
    static func sameDirectory(_ before: SFTPAttributes, _ after: SFTPAttributes) -> Bool {
        let stripped = { (attributes: SFTPAttributes) in
            SFTPAttributes(uid: attributes.uid, gid: attributes.gid, permissions: attributes.permissions)
        }
        return sameFile(stripped(before), stripped(after))
    }

    func changed(_ path: RemotePath, _ reason: String) -> RemoteFilesError {
        RemoteFilesError(
            .changedWhileReading,
            "\(host): \(path.escaped) changed while it was opened (\(reason)); nothing was read from it: read it again, and if it keeps changing, find out what replaces it"
        )
    }

    func checkRegular(_ attributes: SFTPAttributes, _ path: RemotePath) throws {
        switch attributes.type {
        case .file, .unknown:
            return
        case .directory:
            throw RemoteFilesError(
                .isADirectory, "\(host): \(path.escaped) is a directory; list it with `hostscope files ls` instead")
        default:
            throw RemoteFilesError(
                .notAFile,
                "\(host): \(path.escaped) is a \(attributes.type.rawValue), not a regular file; only regular files are read"
            )
        }
    }
}
