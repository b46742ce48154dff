#include "support/pieces_in_order.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using board::pieces_in_order;

namespace {

std::string text_of(std::size_t i) {
    return std::to_string(i) + ";";
}

}  // namespace

TEST_CASE("pieces reach the sink once each, in order, however many there are", "[support]") {
    for (std::size_t count = 0; count <= 40; ++count) {
        std::vector<std::string> handed;
        std::vector<std::thread::id> writers(count);
        pieces_in_order(
            count,
            [&](std::size_t i, std::string& out) {
                writers[i] = std::this_thread::get_id();
                out += text_of(i);
            },
            [&](const std::string& piece) { handed.push_back(piece); });
        REQUIRE(handed.size() == count);
        for (std::size_t i = 0; i < count; ++i) CHECK(handed[i] == text_of(i));
        // From four pieces on, the odd ones are another thread's work.
        if (count >= 4) {
            CHECK(writers[1] != std::this_thread::get_id());
            CHECK(writers[0] == std::this_thread::get_id());
        }
    }
}

TEST_CASE("a writer's or the sink's exception reaches the caller, and nothing is left running",
          "[support]") {
    for (const std::size_t failing :
         {std::size_t{0}, std::size_t{1}, std::size_t{6}, std::size_t{7}}) {
        std::vector<std::string> handed;
        CHECK_THROWS_WITH(pieces_in_order(
                              10,
                              [&](std::size_t i, std::string& out) {
                                  if (i == failing) throw std::runtime_error("piece failed");
                                  out += text_of(i);
                              },
                              [&](const std::string& piece) { handed.push_back(piece); }),
                          "piece failed");
        // Everything before the failed piece was handed on, in order, and nothing after it.
        REQUIRE(handed.size() == failing);
        for (std::size_t i = 0; i < failing; ++i) CHECK(handed[i] == text_of(i));
    }
    std::size_t sunk = 0;
    CHECK_THROWS_WITH(pieces_in_order(
                          10,
                          [](std::size_t i, std::string& out) { out += text_of(i); },
                          [&](const std::string&) {
                              if (++sunk == 5) throw std::runtime_error("sink failed");
                          }),
                      "sink failed");
    CHECK(sunk == 5);
}
