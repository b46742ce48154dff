#include "support/in_halves.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

using board::at_once;
using board::in_halves;

TEST_CASE("two jobs at once: the second on another thread, both done on return", "[support]") {
    std::thread::id first_on;
    std::thread::id second_on;
    at_once([&] { first_on = std::this_thread::get_id(); },
            [&] { second_on = std::this_thread::get_id(); });
    CHECK(first_on == std::this_thread::get_id());
    CHECK(second_on != std::thread::id{});
    CHECK(second_on != std::this_thread::get_id());
}

TEST_CASE("two jobs not worth a thread: both here, the first first", "[support]") {
    std::vector<int> order;
    std::thread::id second_on;
    at_once([&] { order.push_back(1); },
            [&] {
                order.push_back(2);
                second_on = std::this_thread::get_id();
            },
            false);
    CHECK(order == std::vector<int>{1, 2});
    CHECK(second_on == std::this_thread::get_id());
}

TEST_CASE("either job's exception reaches the caller once the other has finished", "[support]") {
    std::atomic<bool> second_done{false};
    CHECK_THROWS_WITH(
        at_once([] { throw std::runtime_error("first failed"); }, [&] { second_done = true; }),
        "first failed");
    CHECK(second_done);

    bool first_done = false;
    CHECK_THROWS_WITH(
        at_once([&] { first_done = true; }, [] { throw std::runtime_error("second failed"); }),
        "second failed");
    CHECK(first_done);
}

TEST_CASE("halves cover every item once, split only above the threshold", "[support]") {
    for (const std::size_t count : {std::size_t{0}, std::size_t{5}, std::size_t{4097}}) {
        std::vector<int> seen(count, 0);
        std::atomic<int> calls{0};
        in_halves(
            count,
            [&](std::size_t from, std::size_t to) {
                ++calls;
                for (std::size_t i = from; i < to; ++i) ++seen[i];
            },
            8);
        for (const int n : seen) CHECK(n == 1);
        CHECK(calls == (count > 8 ? 2 : 1));
    }
}
