#pragma once
// What the application layer's tests share: a fresh board folder, removed afterwards, and the
// person who acts on it.

#include <board/app.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <system_error>
#include <unistd.h>

namespace board::app_test {

/// `board init` with `prefix` in a folder of its own under temp.
struct TempBoard {
    std::filesystem::path root =
        std::filesystem::temp_directory_path() /
        ("board-app-test-" + std::to_string(::getpid()) + "-" + std::to_string(made++));
    static inline int made = 0;

    explicit TempBoard(const std::string& prefix = "P") {
        std::filesystem::remove_all(root);
        REQUIRE(app::init_board(root, prefix));
    }

    ~TempBoard() {
        std::error_code ec;
        std::filesystem::remove_all(root, ec);
    }

    TempBoard(const TempBoard&) = delete;
    TempBoard& operator=(const TempBoard&) = delete;
};

inline const Actor ana{ActorKind::human, "ana"};

}  // namespace board::app_test
