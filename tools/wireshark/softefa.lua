-- SPDX-License-Identifier: MIT
--
-- softefa's wire format, version 1 (docs/wire.md), for Wireshark and tshark:
--
--   wireshark -X lua_script:tools/wireshark/softefa.lua trace.pcap
--   tshark -X lua_script:tools/wireshark/softefa.lua -r trace.pcap -Y softefa.srd
--
-- or copy this file to ~/.local/lib/wireshark/plugins/ (docs/trace.md). It claims a
-- UDP datagram by its first four bytes (magic 0x5efa, version 1, a known type), as a
-- heuristic dissector, since engines use ephemeral ports; the preference
-- softefa.ports names ports to decode as softefa whatever they hold. Every field is
-- named softefa.<part>.<field>: softefa.ud.*, softefa.piece.*, softefa.srd.* (data),
-- softefa.ack.*, softefa.auth.* (the trailer). A datagram that breaks a rule of
-- docs/wire.md, which softefa's engine would drop, carries the expert item
-- softefa.malformed saying which.

local band = (bit32 or bit).band

local MAGIC = 0x5efa
local VERSION = 1
local TRAILER = 32 -- the authentication trailer: salt, counter, tag
local UD_HDR, PIECE_HDR, DATA_HDR, RDMA_EXT, ACK_HDR = 24, 36, 64, 16, 28

local p = Proto("softefa", "softefa (EFA and SRD over UDP)")

local types = {[1] = "UD", [2] = "SRD data", [3] = "SRD ack", [4] = "UD piece", [5] = "SRD probe"}
local opcodes = {
    [0] = "send", [1] = "RDMA write", [2] = "RDMA write with immediate",
    [3] = "RDMA read request", [4] = "RDMA read response",
}
local op_short = {[0] = "SEND", [1] = "WRITE", [2] = "WRITE_IMM", [3] = "READ_REQ", [4] = "READ_RESP"}
-- The EFA completion statuses a responder refuses with (docs/wire.md).
local statuses = {
    [0] = "ok", [7] = "remote bad address", [8] = "remote abort",
    [9] = "bad destination QP", [10] = "RNR (no receive posted: again later)",
    [11] = "remote bad length", [13] = "sender fell silent", [14] = "unknown peer",
}

local F = ProtoField
local f = {
    magic = F.uint16("softefa.magic", "Magic", base.HEX),
    version = F.uint8("softefa.version", "Version"),
    type_byte = F.uint8("softefa.type_byte", "Type byte", base.HEX),
    type = F.uint8("softefa.type", "Type", base.DEC, types, 0x7f),
    authenticated = F.bool("softefa.authenticated", "Authenticated (trailer follows)", 8, nil, 0x80),
    src_port = F.uint16("softefa.src_port", "Sender's base port"),
    payload = F.bytes("softefa.payload", "Payload"),

    ud_dst_qpn = F.uint16("softefa.ud.dst_qpn", "Destination QPN"),
    ud_src_qpn = F.uint16("softefa.ud.src_qpn", "Source QPN"),
    ud_flags = F.uint8("softefa.ud.flags", "Flags", base.HEX),
    ud_flag_imm = F.bool("softefa.ud.flags.imm", "Immediate data", 8, nil, 0x01),
    ud_sl = F.uint8("softefa.ud.sl", "Service level"),
    ud_qkey = F.uint32("softefa.ud.qkey", "Q_Key", base.HEX),
    ud_imm = F.uint32("softefa.ud.imm", "Immediate data", base.HEX),
    ud_payload_len = F.uint16("softefa.ud.payload_len", "Payload length"),
    ud_reserved = F.uint16("softefa.ud.reserved", "Reserved", base.HEX),

    piece_src_epoch = F.uint32("softefa.piece.src_epoch", "Sender's epoch", base.HEX),
    piece_msg_id = F.uint32("softefa.piece.msg_id", "Message number"),
    piece_msg_len = F.uint16("softefa.piece.msg_len", "Message length"),
    piece_offset = F.uint16("softefa.piece.offset", "Offset in the message"),

    srd_flags = F.uint8("softefa.srd.flags", "Flags", base.HEX),
    srd_flag_imm = F.bool("softefa.srd.flags.imm", "Immediate data", 8, nil, 0x01),
    srd_flag_ack = F.bool("softefa.srd.flags.ack", "An ack rides along", 8, nil, 0x02),
    srd_flag_host = F.bool("softefa.srd.flags.ack_host", "The riding ack says its host delay", 8, nil, 0x04),
    srd_path = F.uint8("softefa.srd.path", "Path (sender's index)"),
    srd_src_epoch = F.uint32("softefa.srd.src_epoch", "Sender's epoch", base.HEX),
    srd_dst_epoch = F.uint32("softefa.srd.dst_epoch", "Receiver's epoch believed", base.HEX),
    srd_hello = F.bool("softefa.srd.hello", "Hello (the receiver's epoch not yet known)"),
    srd_psn = F.uint32("softefa.srd.psn", "PSN"),
    srd_horizon = F.uint32("softefa.srd.horizon", "Horizon (every PSN below is done)"),
    srd_msn = F.uint32("softefa.srd.msn", "Message number"),
    srd_msg_len = F.uint32("softefa.srd.msg_len", "Message length"),
    srd_offset = F.uint32("softefa.srd.offset", "Offset in the message"),
    srd_dst_qpn = F.uint16("softefa.srd.dst_qpn", "Destination QPN"),
    srd_src_qpn = F.uint16("softefa.srd.src_qpn", "Source QPN"),
    srd_qkey = F.uint32("softefa.srd.qkey", "Q_Key", base.HEX),
    srd_imm = F.uint32("softefa.srd.imm", "Immediate data", base.HEX),
    srd_opcode = F.uint8("softefa.srd.opcode", "Opcode", base.DEC, opcodes),
    srd_sl = F.uint8("softefa.srd.sl", "Service level"),
    srd_payload_len = F.uint16("softefa.srd.payload_len", "Payload length"),
    srd_ack_cum = F.uint32("softefa.srd.ack_cum", "Riding ack: cumulative PSN"),
    srd_ack_echo = F.uint32("softefa.srd.ack_echo", "Riding ack: echo PSN"),
    srd_status = F.uint8("softefa.srd.status", "Read response status", base.DEC, statuses),
    srd_ack_host = F.uint24("softefa.srd.ack_host", "Riding ack: host delay (256 ns units)"),
    srd_rkey = F.uint32("softefa.srd.rkey", "R_Key", base.HEX),
    srd_raddr = F.uint64("softefa.srd.raddr", "Remote address", base.HEX),
    srd_read_msn = F.uint32("softefa.srd.read_msn", "Read request's message number"),

    ack_nsack = F.uint8("softefa.ack.nsack", "SACK blocks"),
    ack_nnak = F.uint8("softefa.ack.nnak", "NAK entries"),
    ack_src_epoch = F.uint32("softefa.ack.src_epoch", "Acknowledging engine's epoch", base.HEX),
    ack_dst_epoch = F.uint32("softefa.ack.dst_epoch", "Data sender's epoch answered", base.HEX),
    ack_cum = F.uint32("softefa.ack.cum", "Cumulative PSN (every PSN below received)"),
    ack_echo_psn = F.uint32("softefa.ack.echo_psn", "Echo PSN"),
    ack_flags = F.uint8("softefa.ack.flags", "Flags", base.HEX),
    ack_flag_stale = F.bool("softefa.ack.flags.stale", "STALE (names an incarnation gone)", 8, nil, 0x01),
    ack_flag_dup = F.bool("softefa.ack.flags.dup", "DUP (echo PSN came again)", 8, nil, 0x02),
    ack_flag_host = F.bool("softefa.ack.flags.host", "HOST (host delay follows)", 8, nil, 0x04),
    ack_flag_answer = F.bool("softefa.ack.flags.answer", "ANSWER (echo is a probe's number)", 8, nil, 0x08),
    ack_flag_hello = F.bool("softefa.ack.flags.hello", "HELLO (echo named no epoch; its path follows)", 8, nil, 0x10),
    ack_dup_path = F.uint8("softefa.ack.dup_path", "Path: the duplicate's first, or the hello's"),
    ack_dup_age = F.uint16("softefa.ack.dup_age", "Duplicate's age (16.4 us units)"),
    ack_host_delay = F.uint32("softefa.ack.host_delay", "Host delay (256 ns units)"),
    ack_sack = F.none("softefa.ack.sack", "SACK block"),
    ack_sack_start = F.uint32("softefa.ack.sack.start", "Start PSN"),
    ack_sack_len = F.uint32("softefa.ack.sack.len", "Length"),
    ack_nak = F.none("softefa.ack.nak", "NAK"),
    ack_nak_psn = F.uint32("softefa.ack.nak.psn", "PSN"),
    ack_nak_status = F.uint8("softefa.ack.nak.status", "Status", base.DEC, statuses),
    ack_nak_zero = F.uint24("softefa.ack.nak.zero", "Zero", base.HEX),

    probe_reserved = F.uint16("softefa.probe.reserved", "Reserved", base.HEX),
    probe_src_epoch = F.uint32("softefa.probe.src_epoch", "Prober's epoch", base.HEX),
    probe_dst_epoch = F.uint32("softefa.probe.dst_epoch", "Epoch asked", base.HEX),
    probe_number = F.uint32("softefa.probe.number", "Probe number"),

    auth = F.none("softefa.auth", "Authentication trailer"),
    auth_salt = F.uint64("softefa.auth.salt", "Salt (sender's incarnation)", base.HEX),
    auth_counter = F.uint64("softefa.auth.counter", "Counter"),
    auth_tag = F.bytes("softefa.auth.tag", "Tag (Poly1305)"),
}
local fields = {}
for _, v in pairs(f) do fields[#fields + 1] = v end
p.fields = fields

local e_malformed = ProtoExpert.new("softefa.malformed", "Malformed softefa datagram",
    expert.group.MALFORMED, expert.severity.ERROR)
p.experts = {e_malformed}

p.prefs.ports = Pref.range("UDP ports", "", "UDP ports decoded as softefa whatever they carry "
    .. "(the heuristic finds softefa on any port)", 65535)

-- A rule of docs/wire.md broken: said on the item, and the datagram is marked.
local function malformed(item, pinfo, text)
    item:add_proto_expert_info(e_malformed, text)
    pinfo.cols.info:append(" [malformed: " .. text .. "]")
end

-- Adds a big-endian field of the given bytes, returning the item and its value.
local function field(tree, pf, tvb, off, len)
    local r = tvb(off, len)
    local v = len == 8 and r:uint64() or r:uint()
    return tree:add(pf, r), v
end

local function payload(tree, tvb, off, len)
    if len > 0 then tree:add(f.payload, tvb(off, len)) end
end

-- The UD header, shared by whole UD datagrams and pieces (offsets 4..23).
local function ud_header(tvb, tree, pinfo, root)
    local h = {}
    _, h.dst_qpn = field(tree, f.ud_dst_qpn, tvb, 6, 2)
    _, h.src_qpn = field(tree, f.ud_src_qpn, tvb, 8, 2)
    local fi
    fi, h.flags = field(tree, f.ud_flags, tvb, 10, 1)
    fi:add(f.ud_flag_imm, tvb(10, 1))
    if band(h.flags, 0xfe) ~= 0 then malformed(fi, pinfo, "UD flags other than bit 0") end
    field(tree, f.ud_sl, tvb, 11, 1)
    _, h.qkey = field(tree, f.ud_qkey, tvb, 12, 4)
    field(tree, f.ud_imm, tvb, 16, 4)
    fi, h.payload_len = field(tree, f.ud_payload_len, tvb, 20, 2)
    local ri, res = field(tree, f.ud_reserved, tvb, 22, 2)
    if res ~= 0 then malformed(ri, pinfo, "UD reserved bytes not zero") end
    h.len_item = fi
    return h
end

local function dissect_ud(tvb, len, tree, pinfo, root)
    if len < UD_HDR then return malformed(root, pinfo, "shorter than the UD header (24 bytes)") end
    local h = ud_header(tvb, tree, pinfo, root)
    pinfo.cols.info:set(string.format("UD qpn %d -> %d qkey 0x%08x len %d",
        h.src_qpn, h.dst_qpn, h.qkey, h.payload_len))
    if len ~= UD_HDR + h.payload_len then
        return malformed(h.len_item, pinfo, string.format(
            "datagram of %d bytes, not 24 + payload_len (%d)", len, UD_HDR + h.payload_len))
    end
    payload(tree, tvb, UD_HDR, h.payload_len)
end

local function dissect_piece(tvb, len, tree, pinfo, root)
    if len < PIECE_HDR then return malformed(root, pinfo, "shorter than the UD piece header (36 bytes)") end
    local h = ud_header(tvb, tree, pinfo, root)
    field(tree, f.piece_src_epoch, tvb, 24, 4)
    local _, id = field(tree, f.piece_msg_id, tvb, 28, 4)
    local mi, msg_len = field(tree, f.piece_msg_len, tvb, 32, 2)
    local _, offset = field(tree, f.piece_offset, tvb, 34, 2)
    pinfo.cols.info:set(string.format("UD piece qpn %d -> %d qkey 0x%08x msg %d bytes %d-%d of %d",
        h.src_qpn, h.dst_qpn, h.qkey, id, offset, offset + h.payload_len, msg_len))
    if len ~= PIECE_HDR + h.payload_len then
        return malformed(h.len_item, pinfo, string.format(
            "datagram of %d bytes, not 36 + payload_len (%d)", len, PIECE_HDR + h.payload_len))
    end
    if h.payload_len == 0 then malformed(h.len_item, pinfo, "an empty piece") end
    if offset + h.payload_len > msg_len then malformed(mi, pinfo, "the piece ends past the message") end
    payload(tree, tvb, PIECE_HDR, h.payload_len)
end

-- The riding ack's and the opcode's fields of a data packet, with the rules on them.
local function data_rules(tvb, tree, pinfo, h)
    if band(h.flags, 0xf8) ~= 0 then malformed(h.flags_item, pinfo, "SRD data flags other than bits 0-2") end
    if band(h.flags, 0x04) ~= 0 and band(h.flags, 0x02) == 0 then
        malformed(h.flags_item, pinfo, "ack_host flag without an ack riding")
    elseif band(h.flags, 0x04) == 0 and h.ack_host ~= 0 then
        malformed(h.host_item, pinfo, "a riding ack's host delay without its flag")
    end
    if h.src_epoch == 0 then malformed(h.epoch_item, pinfo, "the sender's epoch is zero") end
    if h.read_msn and h.read_msn ~= 0 and h.op ~= 4 then
        malformed(h.msn_item, pinfo, "a read_msn on an opcode other than read response")
    end
    if h.payload_len == 0 and h.msg_len ~= 0 and h.op ~= 3 and h.status == 0 then
        malformed(h.len_item, pinfo, "an empty packet of a message that is not empty")
    end
    if h.op > 4 then return malformed(h.op_item, pinfo, "unknown opcode " .. h.op) end
    if h.op == 4 and h.status ~= 0 and (statuses[h.status] == nil or h.status == 10) then
        malformed(h.status_item, pinfo, "a read response status no responder refuses with")
    elseif h.op ~= 4 and h.status ~= 0 then
        malformed(h.status_item, pinfo, "status set on an opcode other than read response")
    end
    if h.offset + h.payload_len > h.msg_len then malformed(h.len_item, pinfo, "the payload ends past the message") end
    if h.op == 3 and h.payload_len ~= 0 then malformed(h.len_item, pinfo, "a read request with a payload") end
    if h.op == 4 and h.status ~= 0 and h.payload_len ~= 0 then
        malformed(h.len_item, pinfo, "a refusing read response with a payload")
    end
end

local function data_info(pinfo, h)
    local s = string.format("SRD %s psn %d msn %d qpn %d -> %d len %d", op_short[h.op] or ("op " .. h.op),
        h.psn, h.msn, h.src_qpn, h.dst_qpn, h.payload_len)
    if h.msg_len ~= h.payload_len or h.offset ~= 0 then
        s = s .. string.format(" at %d of %d", h.offset, h.msg_len)
    end
    if h.dst_epoch == 0 then s = s .. " hello" end
    if band(h.flags, 0x02) ~= 0 then s = s .. string.format(" [ack cum %d]", h.ack_cum) end
    if h.op == 4 and h.status ~= 0 then s = s .. " refused " .. h.status end
    pinfo.cols.info:set(s)
end

local function dissect_data(tvb, len, tree, pinfo, root)
    if len < DATA_HDR then return malformed(root, pinfo, "shorter than the SRD data header (64 bytes)") end
    local h = {}
    local fi
    h.flags_item, h.flags = field(tree, f.srd_flags, tvb, 6, 1)
    h.flags_item:add(f.srd_flag_imm, tvb(6, 1))
    h.flags_item:add(f.srd_flag_ack, tvb(6, 1))
    h.flags_item:add(f.srd_flag_host, tvb(6, 1))
    field(tree, f.srd_path, tvb, 7, 1)
    h.epoch_item, h.src_epoch = field(tree, f.srd_src_epoch, tvb, 8, 4)
    fi, h.dst_epoch = field(tree, f.srd_dst_epoch, tvb, 12, 4)
    if h.dst_epoch == 0 then tree:add(f.srd_hello, tvb(12, 4), true):set_generated() end
    _, h.psn = field(tree, f.srd_psn, tvb, 16, 4)
    field(tree, f.srd_horizon, tvb, 20, 4)
    _, h.msn = field(tree, f.srd_msn, tvb, 24, 4)
    _, h.msg_len = field(tree, f.srd_msg_len, tvb, 28, 4)
    _, h.offset = field(tree, f.srd_offset, tvb, 32, 4)
    _, h.dst_qpn = field(tree, f.srd_dst_qpn, tvb, 36, 2)
    _, h.src_qpn = field(tree, f.srd_src_qpn, tvb, 38, 2)
    field(tree, f.srd_qkey, tvb, 40, 4)
    field(tree, f.srd_imm, tvb, 44, 4)
    h.op_item, h.op = field(tree, f.srd_opcode, tvb, 48, 1)
    field(tree, f.srd_sl, tvb, 49, 1)
    h.len_item, h.payload_len = field(tree, f.srd_payload_len, tvb, 50, 2)
    _, h.ack_cum = field(tree, f.srd_ack_cum, tvb, 52, 4)
    field(tree, f.srd_ack_echo, tvb, 56, 4)
    h.status_item, h.status = field(tree, f.srd_status, tvb, 60, 1)
    local hi, host = field(tree, f.srd_ack_host, tvb, 61, 3)
    if host ~= 0 then hi:append_text(string.format(" (%.1f us)", host * 256 / 1000)) end
    h.host_item, h.ack_host = hi, host
    tree:append_text(", " .. (opcodes[h.op] or "unknown opcode") .. (h.dst_epoch == 0 and ", hello" or ""))
    data_info(pinfo, h)
    local hdr = h.op == 0 and DATA_HDR or DATA_HDR + RDMA_EXT
    if h.op >= 1 and h.op <= 4 and len >= hdr then
        local ext = tree:add(tvb(DATA_HDR, RDMA_EXT), "RDMA extension")
        field(ext, f.srd_rkey, tvb, 64, 4)
        field(ext, f.srd_raddr, tvb, 68, 8)
        h.msn_item, h.read_msn = field(ext, f.srd_read_msn, tvb, 76, 4)
    end
    data_rules(tvb, tree, pinfo, h)
    if len ~= hdr + h.payload_len then
        return malformed(h.len_item, pinfo, string.format(
            "datagram of %d bytes, not %d + payload_len (%d)", len, hdr, hdr + h.payload_len))
    end
    payload(tree, tvb, hdr, h.payload_len)
end

local function ack_info(pinfo, a)
    local s = string.format("SRD ACK cum %d echo %d", a.cum, a.echo)
    if a.nsack > 0 then s = s .. " sack " .. a.nsack end
    if a.nnak > 0 then s = s .. " nak " .. a.nnak end
    for _, fl in ipairs({{1, "STALE"}, {2, "DUP"}, {4, "HOST"}, {8, "ANSWER"}, {16, "HELLO"}}) do
        if band(a.flags, fl[1]) ~= 0 then s = s .. " " .. fl[2] end
    end
    if a.dst_epoch == 0 then s = s .. " hello" end
    pinfo.cols.info:set(s)
end

-- The SACK blocks and NAK entries after the fixed part, at off.
local function ack_lists(tvb, tree, pinfo, a, off)
    for _ = 1, a.nsack do
        local start, n = tvb(off, 4):uint(), tvb(off + 4, 4):uint()
        local blk = tree:add(f.ack_sack, tvb(off, 8))
        blk:append_text(string.format(": %d-%d", start, start + n - 1))
        field(blk, f.ack_sack_start, tvb, off, 4)
        local li = field(blk, f.ack_sack_len, tvb, off + 4, 4)
        if n == 0 then malformed(li, pinfo, "an empty SACK block") end
        off = off + 8
    end
    for _ = 1, a.nnak do
        local nak = tree:add(f.ack_nak, tvb(off, 8))
        local _, psn = field(nak, f.ack_nak_psn, tvb, off, 4)
        local si, st = field(nak, f.ack_nak_status, tvb, off + 4, 1)
        local zi, z = field(nak, f.ack_nak_zero, tvb, off + 5, 3)
        nak:append_text(string.format(": psn %d status %d", psn, st))
        if statuses[st] == nil or st == 0 then malformed(si, pinfo, "a NAK status no responder refuses with") end
        if z ~= 0 then malformed(zi, pinfo, "NAK padding not zero") end
        off = off + 8
    end
end

local function dissect_ack(tvb, len, tree, pinfo, root)
    if len < ACK_HDR then return malformed(root, pinfo, "shorter than the SRD ack header (28 bytes)") end
    local a = {}
    local si, ni, fi
    si, a.nsack = field(tree, f.ack_nsack, tvb, 6, 1)
    ni, a.nnak = field(tree, f.ack_nnak, tvb, 7, 1)
    local ei, src_epoch = field(tree, f.ack_src_epoch, tvb, 8, 4)
    if src_epoch == 0 then malformed(ei, pinfo, "the acknowledging engine's epoch is zero") end
    _, a.dst_epoch = field(tree, f.ack_dst_epoch, tvb, 12, 4)
    _, a.cum = field(tree, f.ack_cum, tvb, 16, 4)
    _, a.echo = field(tree, f.ack_echo_psn, tvb, 20, 4)
    fi, a.flags = field(tree, f.ack_flags, tvb, 24, 1)
    fi:add(f.ack_flag_stale, tvb(24, 1))
    fi:add(f.ack_flag_dup, tvb(24, 1))
    fi:add(f.ack_flag_host, tvb(24, 1))
    fi:add(f.ack_flag_answer, tvb(24, 1))
    fi:add(f.ack_flag_hello, tvb(24, 1))
    local pi, dup_path = field(tree, f.ack_dup_path, tvb, 25, 1)
    local gi, dup_age = field(tree, f.ack_dup_age, tvb, 26, 2)
    if dup_age ~= 0 and dup_age ~= 0xffff then gi:append_text(string.format(" (%.1f us)", dup_age * 16384 / 1000)) end
    ack_info(pinfo, a)
    local dup, host = band(a.flags, 0x02) ~= 0, band(a.flags, 0x04) ~= 0
    local hello = band(a.flags, 0x10) ~= 0
    if band(a.flags, 0xe0) ~= 0 then malformed(fi, pinfo, "ack flags other than bits 0-4") end
    if host and band(a.flags, 0x01) ~= 0 then malformed(fi, pinfo, "HOST with STALE") end
    if band(a.flags, 0x08) ~= 0 and band(a.flags, 0x03) ~= 0 then
        malformed(fi, pinfo, "ANSWER with STALE or DUP")
    end
    if hello and band(a.flags, 0x0b) ~= 0 then malformed(fi, pinfo, "HELLO with STALE, DUP or ANSWER") end
    if not dup and not hello and dup_path ~= 0 then malformed(pi, pinfo, "dup_path without DUP or HELLO") end
    if not dup and dup_age ~= 0 then malformed(gi, pinfo, "dup_age without DUP") end
    if a.nsack > 32 then return malformed(si, pinfo, "more than 32 SACK blocks") end
    if a.nnak > 16 then return malformed(ni, pinfo, "more than 16 NAK entries") end
    local want = ACK_HDR + (host and 4 or 0) + 8 * (a.nsack + a.nnak)
    if len ~= want then
        return malformed(root, pinfo, string.format("ack of %d bytes, not %d for its flags and counts", len, want))
    end
    local off = ACK_HDR
    if host then
        local hi, d = field(tree, f.ack_host_delay, tvb, ACK_HDR, 4)
        hi:append_text(string.format(" (%.1f us)", d * 256 / 1000))
        if d > 0xffffff then malformed(hi, pinfo, "a host delay past 24 bits") end
        off = off + 4
    end
    ack_lists(tvb, tree, pinfo, a, off)
end

-- A sender's "answer me" before it resends (docs/wire.md, "SRD probe").
local function dissect_probe(tvb, len, tree, pinfo, root)
    if len ~= 20 then return malformed(root, pinfo, string.format("probe of %d bytes, not 20", len)) end
    local ri, rsv = field(tree, f.probe_reserved, tvb, 6, 2)
    if rsv ~= 0 then malformed(ri, pinfo, "probe reserved bytes not zero") end
    local si, src = field(tree, f.probe_src_epoch, tvb, 8, 4)
    if src == 0 then malformed(si, pinfo, "the prober's epoch is zero") end
    local di, dst = field(tree, f.probe_dst_epoch, tvb, 12, 4)
    if dst == 0 then malformed(di, pinfo, "the epoch asked is zero") end
    local _, n = field(tree, f.probe_number, tvb, 16, 4)
    pinfo.cols.info:set(string.format("SRD PROBE %d", n))
end

local dissectors = {[1] = dissect_ud, [2] = dissect_data, [3] = dissect_ack, [4] = dissect_piece,
    [5] = dissect_probe}

local function dissect_trailer(tvb, off, tree)
    local t = tree:add(f.auth, tvb(off, TRAILER))
    field(t, f.auth_salt, tvb, off, 8)
    field(t, f.auth_counter, tvb, off + 8, 8)
    t:add(f.auth_tag, tvb(off + 16, 16))
end

function p.dissector(tvb, pinfo, tree)
    local len = tvb:len()
    pinfo.cols.protocol = "softefa"
    local root = tree:add(p, tvb())
    if len < 4 then return malformed(root, pinfo, "shorter than the 4-byte prefix") end
    local mi, magic = field(root, f.magic, tvb, 0, 2)
    local vi, version = field(root, f.version, tvb, 2, 1)
    local ti, tbyte = field(root, f.type_byte, tvb, 3, 1)
    ti:add(f.type, tvb(3, 1))
    ti:add(f.authenticated, tvb(3, 1))
    local ptype, auth = band(tbyte, 0x7f), band(tbyte, 0x80) ~= 0
    pinfo.cols.info:set(types[ptype] or ("type " .. ptype))
    if magic ~= MAGIC then return malformed(mi, pinfo, "not the magic 0x5efa") end
    if version ~= VERSION then return malformed(vi, pinfo, "a wire version other than 1") end
    local d = dissectors[ptype]
    if not d then return malformed(ti, pinfo, "unknown packet type " .. ptype) end
    root:append_text(", " .. types[ptype])
    -- A capture cut short (tcpdump -s): its rules cannot be checked on bytes it lacks,
    -- and the last 32 captured are not the trailer. The prefix and the port only.
    local whole = tvb:reported_len()
    if len < whole then
        root:append_text(string.format(", capture cut at %d of %d bytes", len, whole))
        pinfo.cols.info:append(string.format(" [cut at %d of %d bytes]", len, whole))
        if len >= 6 then field(root, f.src_port, tvb, 4, 2) end
        return len
    end
    -- The decoders see the datagram without its trailer, as the engine's do.
    local body = auth and len - TRAILER or len
    if body < 6 then
        return malformed(root, pinfo, auth and "too short for its authentication trailer"
            or "no room for the sender's base port")
    end
    local si, sport = field(root, f.src_port, tvb, 4, 2)
    if sport == 0 then malformed(si, pinfo, "the sender's base port is zero") end
    d(tvb(0, body):tvb(), body, root, pinfo, root)
    if auth then
        dissect_trailer(tvb, body, root)
        pinfo.cols.info:append(" auth")
    end
    return len
end

-- softefa's by its prefix alone: magic, version 1, a known type.
local function heuristic(tvb, pinfo, tree)
    if tvb:len() < 4 or tvb(0, 2):uint() ~= MAGIC or tvb(2, 1):uint() ~= VERSION then return false end
    if not types[band(tvb(3, 1):uint(), 0x7f)] then return false end
    p.dissector(tvb, pinfo, tree)
    return true
end
p:register_heuristic("udp", heuristic)

local registered_ports = ""
function p.prefs_changed()
    local udp = DissectorTable.get("udp.port")
    if registered_ports ~= "" then udp:remove(registered_ports, p) end
    registered_ports = p.prefs.ports
    if registered_ports ~= "" then udp:add(registered_ports, p) end
end
