internal import CCurl
import ValueFormats

/// The transfer thread's side: owns the multi handle and every easy handle, and runs the
/// `curl_multi_perform` / `curl_multi_poll` loop until shutdown.
///
/// Created on the transfer thread and never leaves it, so none of its state needs a lock.
final class CurlDriver {
    private let loop: TransferLoop
    private var active: [ObjectIdentifier: ActiveTransfer] = [:]
    private let clock = ContinuousClock()

    init(loop: TransferLoop) {
        self.loop = loop
    }

    func run() {
        var multi = MultiHandle()
        if let handle = multi {
            serve(handle)
        } else {
            failEverything(
                HTTPError(code: .internalError, message: "libcurl could not be initialised; no request can be sent"))
        }
        // Free the multi handle, and with it the connection cache, before saying the thread is done.
        multi = nil
        loop.markExited()
    }

    private func serve(_ multi: MultiHandle) {
        loop.attach(multi: multi.raw)
        drive(multi)
        // No wakeup may reach the handle once it is freed, and every easy handle leaves it first.
        loop.detach()
        for transfer in active.values {
            curl_multi_remove_handle(multi.raw, transfer.easy.raw)
        }
        active.removeAll()
    }

    /// Runs transfers until shutdown is asked for, then fails the ones still running.
    private func drive(_ multi: MultiHandle) {
        while true {
            let (commands, shutdown) = loop.takeCommands()
            for command in commands {
                handle(command, multi: multi, shutdown: shutdown)
            }
            if shutdown {
                for transfer in active.values {
                    end(transfer, multi: multi, error: transfer.shutdownError())
                }
                return
            }

            var running: Int32 = 0
            curl_multi_perform(multi.raw, &running)
            collectFinished(multi: multi)
            let wait = expireDeadlines(multi: multi)
            curl_multi_poll(multi.raw, nil, 0, Int32(clamping: wait), nil)
        }
    }

    // MARK: Commands

    private func handle(_ command: TransferLoop.Command, multi: MultiHandle, shutdown: Bool) {
        switch command {
        case .start(let transfer):
            guard !shutdown else {
                transfer.finish(
                    HTTPError(
                        code: .shutdown,
                        message: "\(transfer.request.summary) was not sent: the HTTP client was shut down"))
                return
            }
            guard transfer.isRunning else {
                return
            }
            start(transfer, multi: multi)
        case .abort(let transfer):
            if let active = active[ObjectIdentifier(transfer)] {
                end(active, multi: multi, error: nil)
            }
        case .resume(let transfer):
            if let active = active[ObjectIdentifier(transfer)], active.isPaused {
                active.isPaused = false
                active.lastActivity = clock.now
                // May call the write callback at once with the data curl held back; that runs on this thread.
                hostscope_curl_unpause(active.easy.raw)
            }
        }
    }

    private func start(_ transfer: Transfer, multi: MultiHandle) {
        guard let easy = EasyHandle() else {
            transfer.finish(
                HTTPError(
                    code: .internalError,
                    message: "\(transfer.request.summary) was not sent: libcurl could not create a handle"))
            return
        }
        let context = ActiveTransfer(transfer: transfer, easy: easy, startedAt: clock.now)
        do {
            try context.configure()
        } catch {
            transfer.finish(error)
            return
        }
        let added = curl_multi_add_handle(multi.raw, easy.raw)
        guard added == CURLM_OK else {
            transfer.finish(
                HTTPError(
                    code: .internalError,
                    message: "\(transfer.request.summary) was not sent: "
                        + String(cString: curl_multi_strerror(added))))
            return
        }
        active[ObjectIdentifier(transfer)] = context
    }

    // MARK: Completion and deadlines

    private func collectFinished(multi: MultiHandle) {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi.raw, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else {
                continue
            }
            let code = message.pointee.data.result
            guard let context = active.values.first(where: { $0.easy.raw == easy }) else {
                continue
            }
            let error = code == CURLE_OK ? nil : context.error(for: code)
            if error == nil {
                context.deliverHeadIfMissing()
            }
            end(context, multi: multi, error: error)
        }
    }

    /// Fails transfers whose idle or total time ran out; returns how long the next poll may sleep, in ms.
    private func expireDeadlines(multi: MultiHandle) -> Int64 {
        let now = clock.now
        var wait: Duration = .seconds(5)
        for context in Array(active.values) {
            if let (deadline, error) = context.nextDeadline(now: now) {
                if deadline <= now {
                    end(context, multi: multi, error: error())
                } else {
                    wait = min(wait, deadline - now)
                }
            }
        }
        return wait.roundedUpMilliseconds
    }

    /// Takes a transfer off the multi handle and frees its easy handle, then reports the outcome (`nil` for
    /// success or for an abort its requester asked for, which has already failed its waiters).
    private func end(_ context: ActiveTransfer, multi: MultiHandle, error: HTTPError?) {
        curl_multi_remove_handle(multi.raw, context.easy.raw)
        active[ObjectIdentifier(context.transfer)] = nil
        context.transfer.finish(error)
    }

    private func failEverything(_ error: HTTPError) {
        loop.detach()
        // Refuse new work first, so that no command can slip in after the queue was emptied.
        loop.requestShutdown()
        let (commands, _) = loop.takeCommands()
        for case .start(let transfer) in commands {
            transfer.finish(error)
        }
    }
}
