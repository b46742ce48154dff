#pragma once
// Two independent jobs at once, for the board-wide loops whose work splits cleanly (parsing
// index lines while their logs are statted, folding logs in halves): on a 2-core machine the
// two take the time of the longer one.

#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>

namespace board {

/// Below this many items of board-wide work, starting a thread costs more than it saves.
inline constexpr std::size_t items_worth_a_thread = 2048;

/// Calls `second()` in a new thread and `first()` in this one. Both are done when it returns;
/// an exception thrown by either is rethrown here (`first`'s when both throw), never left to
/// end the process. Without `worth_a_thread` (too little work to pay for starting one), or no
/// thread to be had (a process limit), this thread does both, `first` first.
template <class First, class Second>
void at_once(First&& first, Second&& second, bool worth_a_thread = true) {
    std::exception_ptr helper_failed;
    std::thread helper;
    if (worth_a_thread) {
        try {
            helper = std::thread{[&] {
                try {
                    second();
                } catch (...) {
                    helper_failed = std::current_exception();
                }
            }};
        } catch (const std::system_error&) {
            // No thread: both here.
        }
    }
    try {
        first();
        if (!helper.joinable()) second();
    } catch (...) {
        if (helper.joinable()) helper.join();
        throw;
    }
    if (helper.joinable()) helper.join();
    if (helper_failed) std::rethrow_exception(helper_failed);
}

/// Calls `work(from, to)` on [0, count / 2) and [count / 2, count) at once when `count`
/// exceeds `split_above`, else on [0, count) here.
template <class Work>
void in_halves(std::size_t count, Work&& work, std::size_t split_above = items_worth_a_thread) {
    if (count <= split_above) {
        work(std::size_t{0}, count);
        return;
    }
    at_once([&] { work(std::size_t{0}, count / 2); }, [&] { work(count / 2, count); });
}

}  // namespace board
