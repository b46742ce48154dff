#pragma once
// Work over [0, count) in two halves at once, for the board-wide loops whose items are
// independent (parsing index lines and statting their logs, folding logs): on a 2-core
// machine the halves of a 10,000-ticket board take half the time.

#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>

namespace board {

/// Calls `work(from, to)` on [count / 2, count) in a second thread and on [0, count / 2) in
/// this one when `count` exceeds `split_above` (below it, starting a thread costs more than it
/// saves), else on [0, count) here. Both halves are done when it returns; an exception thrown
/// by either is rethrown here (the helper's first), never left to end the process. No thread
/// to be had (a process limit) means this thread does it all.
template <class Work>
void in_halves(std::size_t count, Work&& work, std::size_t split_above = 2048) {
    std::exception_ptr helper_failed;
    std::thread helper;
    std::size_t mine = count;
    if (count > split_above) {
        try {
            helper = std::thread{[&] {
                try {
                    work(count / 2, count);
                } catch (...) {
                    helper_failed = std::current_exception();
                }
            }};
            mine = count / 2;
        } catch (const std::system_error&) {
            // No thread: all of it here.
        }
    }
    try {
        work(std::size_t{0}, mine);
    } catch (...) {
        if (helper.joinable()) helper.join();
        throw;
    }
    if (helper.joinable()) helper.join();
    if (helper_failed) std::rethrow_exception(helper_failed);
}

}  // namespace board
