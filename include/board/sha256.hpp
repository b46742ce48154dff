#pragma once
// SHA-256 (FIPS 180-4), for the content hash recorded with every artifact: `verify` reports
// artifacts edited after they were recorded. Small and dependency-free on purpose.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace board {

class Sha256 {
public:
    Sha256();

    void update(std::string_view bytes);

    /// The digest as 64 lowercase hex digits. The hasher is spent afterwards.
    std::string hex_digest();

private:
    void compress(const unsigned char* block);

    std::array<std::uint32_t, 8> state_;
    std::array<unsigned char, 64> buffer_{};
    std::size_t buffered_ = 0;
    std::uint64_t total_bytes_ = 0;
};

/// The hex digest of `bytes`.
std::string sha256_hex(std::string_view bytes);

}  // namespace board
