#include "common/crypto.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <sys/random.h>

#include <cerrno>
#include <vector>

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
    EVP_MAC* mac = nullptr;
    EVP_MAC_CTX* ctx = nullptr;  // keyed; only copied after construction
    ~Prepared() {
        EVP_MAC_CTX_free(ctx);
        EVP_MAC_free(mac);
    }
};

HmacKey::HmacKey(std::span<const std::uint8_t> key) : key_(key.begin(), key.end()) {
    init_openssl();
    auto p = std::make_unique<Prepared>();
    p->mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (p->mac) p->ctx = EVP_MAC_CTX_new(p->mac);
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0), OSSL_PARAM_construct_end()};
    static const std::uint8_t empty = 0;
    if (p->ctx && EVP_MAC_init(p->ctx, key_.empty() ? &empty : key_.data(), key_.size(), params) == 1)
        prepared_ = std::move(p);
}

HmacKey::~HmacKey() { OPENSSL_cleanse(key_.data(), key_.size()); }

Result<Mac> HmacKey::mac(std::initializer_list<std::span<const std::uint8_t>> parts) const {
    if (!prepared_) return one_shot_hmac(key_, parts);
    // A copy per MAC: the prepared context stays untouched, so concurrent
    // callers only ever read it.
    std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> ctx(EVP_MAC_CTX_dup(prepared_->ctx), EVP_MAC_CTX_free);
    if (!ctx) return Status(Code::SystemError, "HMAC-SHA256 failed in OpenSSL (copying the prepared key)");
    for (auto part : parts)
        if (!part.empty() && EVP_MAC_update(ctx.get(), part.data(), part.size()) != 1)
            return Status(Code::SystemError, "HMAC-SHA256 failed in OpenSSL");
    Mac out{};
    std::size_t len = 0;
    if (EVP_MAC_final(ctx.get(), out.data(), &len, out.size()) != 1 || len != out.size())
        return Status(Code::SystemError, "HMAC-SHA256 failed in OpenSSL");
    return out;
}

Status random_bytes(std::span<std::uint8_t> out) {
    // The kernel's CSPRNG directly (what OpenSSL seeds from): a fraction of
    // a microsecond for a nonce, against a few for RAND_bytes' locked DRBG,
    // and nonces are drawn on the way of every connection's set-up. Up to
    // 256 bytes getrandom() is never short once the pool is initialised.
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
