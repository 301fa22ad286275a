// Constants of tent's wire protocol: identification, versions and the bounds
// every decoder enforces. Both peers must agree on these, so they are protocol
// constants rather than knobs; changing one means a new protocol version.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tent::wire {

// The first four bytes of every frame: "TENT" as they appear on the wire.
inline constexpr uint32_t kMagic = 0x544E4554;

// Versions this build speaks. Frames that negotiate (Hello, HelloAck,
// AddressBlob, Goodbye) are always sent with kMinProtocolVersion in their
// header so that a peer of any later version can still read them.
// 2: a TCP rail's Ok ReadResponse is followed by an Ack of the read, which
// completes it (tcp_rail.h); a reader of version 1 would not wait for it,
// so 1 is no longer spoken.
inline constexpr uint8_t kProtocolVersion = 2;
inline constexpr uint8_t kMinProtocolVersion = 2;
inline constexpr uint8_t kMaxProtocolVersion = 2;

// Version of the job-key handshake's own messages (auth_handshake.h), which
// precede every frame. 3: TCP rails open with one-time tokens the control
// connection's Answer carries, and a responder refuses another version with
// a Refusal (2: every rail socket ran the challenge-response; 1: the
// responder challenged first).
inline constexpr uint8_t kAuthVersion = 3;

// Fixed header: magic, version, type, flags, header length, rail id,
// payload length, connection id, sequence number (see frame_header.h).
inline constexpr size_t kHeaderSize = 32;

// Largest data block one Write, ReadResponse or Send carries. The engine's
// TCP chunk size must not exceed it; a reader never buffers more than this
// plus a small fixed overhead for one frame.
inline constexpr size_t kMaxDataLength = size_t{4} << 20;

// List bounds: a decoder rejects counts above these before reading entries.
inline constexpr size_t kMaxRails = 256;          // rails of one connection
inline constexpr size_t kMaxDevices = 16;         // HCA ports per peer, rkeys per handle
inline constexpr size_t kMaxTcpAddresses = 16;    // TCP listen addresses per peer
inline constexpr size_t kMaxQpsPerDevice = 64;    // pre-created QPs per HCA port
inline constexpr size_t kMaxHostnameLength = 64;  // HOST_NAME_MAX on Linux
inline constexpr size_t kMaxDeviceNameLength = 63; // IBV_SYSFS_NAME_MAX - 1

// Queue pair numbers are 24 bits; 0 is never an RC QP.
inline constexpr uint32_t kMaxQpn = 0xFFFFFF;

} // namespace tent::wire
