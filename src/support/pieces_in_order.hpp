#pragma once
// Output written in pieces on two threads and handed on in order, for a long answer whose
// pieces are independent (a big board's `list --json`): the even pieces are written here, the
// odd ones on a second thread meanwhile (from four pieces on). Buffers are reused, one here and
// two for the second thread, so memory stays a few pieces however long the output is (a half
// held whole was megabytes of fresh pages).

#include <array>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

namespace board {

/// Calls `write(i, out)` for each piece i in [0, count) (appending to an empty `out`) and
/// `sink(out)` with each piece in order of i, on this thread. With 4 pieces or more, the odd
/// ones are written on a second thread, at most two pieces ahead. An exception thrown by
/// either writer or by `sink` is rethrown here once the second thread has stopped; no thread to
/// be had means this thread writes them all.
template <class Write, class Sink>
void pieces_in_order(std::size_t count, Write&& write, Sink&& sink) {
    std::string mine;
    const auto write_here = [&](std::size_t i) {
        mine.clear();
        write(i, mine);
        sink(std::as_const(mine));
    };

    struct Slot {
        std::string text;
        bool full = false;  ///< written, not yet handed on: this thread's; else the helper's
    };

    std::array<Slot, 2> slots;
    std::mutex lock;
    std::condition_variable changed;
    bool quit = false;
    std::exception_ptr helper_failed;
    std::thread helper;
    if (count >= 4) {
        try {
            helper = std::thread{[&] {
                try {
                    for (std::size_t i = 1; i < count; i += 2) {
                        Slot& slot = slots[(i / 2) % 2];
                        {
                            std::unique_lock held{lock};
                            changed.wait(held, [&] { return !slot.full || quit; });
                            if (quit) return;
                        }
                        slot.text.clear();
                        write(i, slot.text);
                        const std::lock_guard held{lock};
                        slot.full = true;
                        changed.notify_all();
                    }
                } catch (...) {
                    const std::lock_guard held{lock};
                    helper_failed = std::current_exception();
                    changed.notify_all();
                }
            }};
        } catch (const std::system_error&) {
            // No thread: all of it here, below.
        }
    }
    if (!helper.joinable()) {
        for (std::size_t i = 0; i < count; ++i) write_here(i);
        return;
    }

    // However this thread leaves, the helper is told to stop and is waited for.
    struct Stop {
        std::mutex& lock;
        std::condition_variable& changed;
        bool& quit;
        std::thread& helper;

        ~Stop() {
            {
                const std::lock_guard held{lock};
                quit = true;
            }
            changed.notify_all();
            helper.join();
        }
    } stop{lock, changed, quit, helper};

    for (std::size_t i = 0; i < count; ++i) {
        if (i % 2 == 0) {
            write_here(i);
            continue;
        }
        Slot& slot = slots[(i / 2) % 2];
        {
            std::unique_lock held{lock};
            changed.wait(held, [&] { return slot.full || helper_failed; });
            if (!slot.full) std::rethrow_exception(helper_failed);
        }
        sink(std::as_const(slot.text));
        const std::lock_guard held{lock};
        slot.full = false;
        changed.notify_all();
    }
}

}  // namespace board
