#include "common/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <sys/random.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <vector>

#include "common/random_reserve.h"

namespace tent {

namespace {
// tent's threads may still run while the program they live in exits; the
// cleanup OpenSSL would register with atexit() frees its locks under them
// (a TCP rail accepted during exit crashed in RAND_bytes).
void init_openssl() {
    static const bool done = OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr) == 1;
    (void)done;
}

Result<Mac> one_shot_hmac(std::span<const std::uint8_t> key,
                          std::initializer_list<std::span<const std::uint8_t>> parts) {
    // The one-shot HMAC() (not deprecated in OpenSSL 3, unlike HMAC_CTX)
    // over the parts joined: they are a label and two nonces, under 128 bytes.
    init_openssl();
    std::vector<std::uint8_t> data;
    for (auto part : parts) data.insert(data.end(), part.begin(), part.end());
    static const std::uint8_t empty = 0;  // HMAC wants valid pointers even for no bytes
    Mac out{};
    unsigned int len = 0;
    if (HMAC(EVP_sha256(), key.empty() ? &empty : key.data(), static_cast<int>(key.size()),
             data.empty() ? &empty : data.data(), data.size(), out.data(), &len) == nullptr ||
        len != out.size())
        return Status(Code::SystemError, "HMAC-SHA256 failed in OpenSSL");
    return out;
}

} // namespace

struct HmacKey::Prepared {
    EVP_MD* sha256 = nullptr;
    EVP_MD_CTX* inner = nullptr;  // SHA-256 after the key XOR ipad; only copied after construction
    EVP_MD_CTX* outer = nullptr;  // after the key XOR opad
    ~Prepared() {
        EVP_MD_CTX_free(inner);  // OpenSSL wipes the states as it frees them
        EVP_MD_CTX_free(outer);
        EVP_MD_free(sha256);
    }
};

namespace {

constexpr std::size_t kSha256Block = 64;

using DigestCtx = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

// A hash state with the key's block XOR pad absorbed.
EVP_MD_CTX* absorbed_pad(const EVP_MD* sha256, const std::array<std::uint8_t, kSha256Block>& block, std::uint8_t pad) {
    std::array<std::uint8_t, kSha256Block> padded;
    for (std::size_t i = 0; i < padded.size(); ++i) padded[i] = block[i] ^ pad;
    DigestCtx ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    const bool ok = ctx && EVP_DigestInit_ex(ctx.get(), sha256, nullptr) == 1 &&
                    EVP_DigestUpdate(ctx.get(), padded.data(), padded.size()) == 1;
    OPENSSL_cleanse(padded.data(), padded.size());
    return ok ? ctx.release() : nullptr;
}

} // namespace

HmacKey::HmacKey(std::span<const std::uint8_t> key) : key_(key.begin(), key.end()) {
    init_openssl();
    auto p = std::make_unique<Prepared>();
    p->sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (!p->sha256) return;
    // The key as one block: hashed first when longer than a block, then padded with zeros.
    std::array<std::uint8_t, kSha256Block> block{};
    unsigned int len = 0;
    if (key_.size() > block.size()) {
        if (EVP_Digest(key_.data(), key_.size(), block.data(), &len, p->sha256, nullptr) != 1) return;
    } else if (!key_.empty()) {
        std::copy(key_.begin(), key_.end(), block.begin());
    }
    p->inner = absorbed_pad(p->sha256, block, 0x36);
    p->outer = absorbed_pad(p->sha256, block, 0x5c);
    OPENSSL_cleanse(block.data(), block.size());
    if (p->inner && p->outer) prepared_ = std::move(p);
}

HmacKey::~HmacKey() { OPENSSL_cleanse(key_.data(), key_.size()); }

Result<Mac> HmacKey::mac(std::initializer_list<std::span<const std::uint8_t>> parts) const {
    if (!prepared_) return one_shot_hmac(key_, parts);
    // Copies per MAC: the prepared states stay untouched, so concurrent
    // callers only ever read them.
    const auto failed = [] { return Status(Code::SystemError, "HMAC-SHA256 failed in OpenSSL"); };
    DigestCtx ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (!ctx || EVP_MD_CTX_copy_ex(ctx.get(), prepared_->inner) != 1) return failed();
    for (auto part : parts)
        if (!part.empty() && EVP_DigestUpdate(ctx.get(), part.data(), part.size()) != 1) return failed();
    Mac inner{};
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx.get(), inner.data(), &len) != 1 || len != inner.size()) return failed();
    Mac out{};
    const bool ok = EVP_MD_CTX_copy_ex(ctx.get(), prepared_->outer) == 1 &&
                    EVP_DigestUpdate(ctx.get(), inner.data(), inner.size()) == 1 &&
                    EVP_DigestFinal_ex(ctx.get(), out.data(), &len) == 1 && len == out.size();
    OPENSSL_cleanse(inner.data(), inner.size());
    if (!ok) return failed();
    return out;
}

Status random_bytes(std::span<std::uint8_t> out) {
    // The kernel's CSPRNG (what OpenSSL seeds from), through a reserve
    // drawn a page at a time (random_reserve.h): nonces and tokens are drawn
    // on the way of every connection's set-up. RAND_bytes' locked DRBG
    // costs a few microseconds more. Up to 256 bytes getrandom() is never
    // short once the pool is initialised.
    if (take_reserved_random(out)) return Status::ok();
    if (out.size() <= 256) {
        for (int attempt = 0; attempt < 4; ++attempt) {
            ssize_t n = ::getrandom(out.data(), out.size(), 0);
            if (n == static_cast<ssize_t>(out.size())) return Status::ok();
            if (n >= 0 || errno != EINTR) break;
        }
    }
    init_openssl();
    if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1)
        return Status(Code::SystemError, "no random bytes from OpenSSL's RAND_bytes");
    return Status::ok();
}

bool equal_in_constant_time(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

} // namespace tent
