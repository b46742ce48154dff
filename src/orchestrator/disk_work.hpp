#pragma once
// Work that waits on the disk (an fdatasync, creating files, folding a log) runs on the
// daemon's disk threads, so the io thread, which launches agents, reads their output and
// plans, never waits on a flush: two runs' durable writes overlap each other and the next
// launch. The work itself must touch nothing the io thread owns; it gets its inputs by value
// or from the suspended caller's frame, and its result comes back to the caller's executor.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <optional>
#include <type_traits>
#include <utility>

namespace board::orchestrator {

/// `work()` run on `disk` (inline when `disk` is null, as in tests), the caller resumed on its
/// own executor with the result. An exception from `work` reaches the caller.
template <class Work>
boost::asio::awaitable<std::invoke_result_t<Work&>> on_disk(boost::asio::any_io_executor disk,
                                                            Work work) {
    using Result = std::invoke_result_t<Work&>;
    if (!disk) co_return work();
    if constexpr (std::is_void_v<Result>) {
        co_await boost::asio::co_spawn(
            disk,
            [&work]() -> boost::asio::awaitable<void> {
                work();
                co_return;
            },
            boost::asio::use_awaitable);
    } else {
        // co_spawn hands a value back default-constructed on failure: an optional can be.
        auto done = co_await boost::asio::co_spawn(
            disk,
            [&work]() -> boost::asio::awaitable<std::optional<Result>> { co_return work(); },
            boost::asio::use_awaitable);
        co_return std::move(*done);
    }
}

}  // namespace board::orchestrator
