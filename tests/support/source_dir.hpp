#pragma once
// The source tree (for the example board under tickets/): $BOARD_SOURCE_DIR, which ctest sets
// for every test, else the current folder.

#include <cstdlib>
#include <filesystem>

namespace board::testing {

inline std::filesystem::path source_dir() {
    const char* dir = std::getenv("BOARD_SOURCE_DIR");
    return dir ? std::filesystem::path{dir} : std::filesystem::current_path();
}

}  // namespace board::testing
