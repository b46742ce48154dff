#include "script.hpp"

#include <catch2/catch.hpp>

TEST_CASE("placeholder") {
    CHECK(true);
}
