#pragma once
// Waiting for what a test expects, with a deadline, on the event that brings it: a change in
// a folder (inotify) or the end of a process (a pidfd). Never a nap of a fixed length, so a
// loaded machine only makes a test slower, not wrong.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include <vector>

namespace board::testing {

/// Returns once `holds()` is true, or false when `timeout` passes first. `holds` is looked at
/// first, then again after each change inotify reports in one of `folders` (a file created,
/// written, renamed in or removed: what a log append, a rename into place or a new socket
/// does). A folder that does not exist yet is watched from the time it does (its parent's
/// change is a change too). Where inotify cannot be had (this user holds every instance it
/// may), it looks every 10 ms instead.
template <class Predicate>
bool wait_until(const std::vector<std::filesystem::path>& folders,
                std::chrono::milliseconds timeout,
                Predicate holds) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const int watch = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    constexpr std::uint32_t changes = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO |
                                      IN_MOVED_FROM | IN_DELETE | IN_ATTRIB;
    std::vector<bool> watched(folders.size(), false);
    bool watching_any = false;
    // Each folder, or while it does not exist its nearest ancestor that does.
    const auto watch_what_exists = [&] {
        for (std::size_t i = 0; i < folders.size(); ++i) {
            if (watched[i] || watch < 0) continue;
            if (::inotify_add_watch(watch, folders[i].c_str(), changes) >= 0) {
                watched[i] = watching_any = true;
                continue;
            }
            for (auto up = folders[i].parent_path(); !up.empty(); up = up.parent_path()) {
                if (::inotify_add_watch(watch, up.c_str(), changes) >= 0) {
                    watching_any = true;
                    break;
                }
                if (up == up.root_path()) break;
            }
        }
    };
    bool held = false;
    for (;;) {
        watch_what_exists();  // before looking: a change after the look is never missed
        if ((held = holds())) break;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd ready{watch, POLLIN, 0};
        const int wait_ms = watching_any ? static_cast<int>(left.count()) : 10;
        if (::poll(&ready, 1, std::min(wait_ms, static_cast<int>(left.count()))) > 0) {
            alignas(inotify_event) char drained[16 * 1024];
            while (::read(watch, drained, sizeof drained) > 0) {
            }
        }
    }
    if (watch >= 0) ::close(watch);
    return held;
}

/// Whether `pid` has ended: gone, or a zombie waiting to be reaped.
inline bool has_ended(pid_t pid) {
    if (::kill(pid, 0) != 0) return errno == ESRCH;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    std::FILE* stat = std::fopen(path, "r");
    if (!stat) return true;
    char text[512] = {};
    const std::size_t n = std::fread(text, 1, sizeof text - 1, stat);
    std::fclose(stat);
    const char* paren = std::strrchr(text, ')');
    return n > 0 && paren && paren[1] == ' ' && paren[2] == 'Z';
}

/// Whether process `pid` (any process, not only a child) ended within `timeout`. A child's
/// exit status is left for waitpid. Waits on a pidfd; where none can be had, looks every
/// 10 ms.
inline bool wait_for_end(pid_t pid, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const int process = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (process < 0 && errno == ESRCH) return true;  // no such process: ended and reaped
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (process < 0 && has_ended(pid)) return true;
        if (left.count() <= 0) break;
        pollfd ended{process, POLLIN, 0};
        const int r =
            ::poll(&ended, process < 0 ? 0 : 1, process < 0 ? 10 : static_cast<int>(left.count()));
        if (r > 0) {
            ::close(process);
            return true;
        }
        // r == 0: the deadline (or, without a pidfd, the next look); r < 0: EINTR, again.
    }
    if (process >= 0) ::close(process);
    return false;
}

}  // namespace board::testing
