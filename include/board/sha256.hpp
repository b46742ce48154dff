#pragma once
// SHA-256 (FIPS 180-4), for the content hash recorded with every artifact: `verify` reports
// artifacts edited after they were recorded. Nettle's (libnettle) behind a small interface, so
// nettle's headers stay out of ours.

#include <memory>
#include <string>
#include <string_view>

struct sha256_ctx;  // nettle/sha2.h

namespace board {

class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(Sha256&&) noexcept;
    Sha256& operator=(Sha256&&) noexcept;

    void update(std::string_view bytes);

    /// The digest as 64 lowercase hex digits. The hasher is spent afterwards.
    std::string hex_digest();

private:
    std::unique_ptr<sha256_ctx> context_;
};

/// The hex digest of `bytes`.
std::string sha256_hex(std::string_view bytes);

}  // namespace board
