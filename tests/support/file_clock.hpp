#pragma once
// For tests that count how many index lines a load rebuilt: a log changed within a tick of the
// clock file times come from is folded again by the next load (catalog/load.cpp, git's
// "racily clean" rule), so such a test first lets that tick pass. It waits on the clock, with
// a deadline, never for a fixed time.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <thread>

namespace board::testing {

inline std::int64_t ns_of(const timespec& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

/// Returns once every change made so far is older than one tick of the file clock.
inline void let_the_file_clock_tick() {
    timespec now{};
    timespec tick{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    REQUIRE(::clock_getres(CLOCK_REALTIME_COARSE, &tick) == 0);
    const auto settled = ns_of(now) + ns_of(tick);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{2};
    while (ns_of(now) <= settled) {
        REQUIRE(std::chrono::steady_clock::now() < deadline);
        std::this_thread::yield();
        ::clock_gettime(CLOCK_REALTIME, &now);
    }
}

}  // namespace board::testing
