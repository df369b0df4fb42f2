"""A small Hive Metastore for tests: ThriftHiveMetastore.get_table over the Thrift binary
protocol, written by hand (Python standard library only; no thrift package).

Protocol facts it follows (hive_metastore.thrift, Thrift's TBinaryProtocol):
  - messages are strict: i32 (0x80010000 | type), string name, i32 seqid; CALL=1,
    REPLY=2, EXCEPTION=3; integers are big-endian; strings are i32 length + bytes;
    a field is i8 type + i16 id + value, a struct ends with STOP (0); map = i8 ktype,
    i8 vtype, i32 size; list/set = i8 etype, i32 size.
  - framed transport: every message is preceded by its i32 length.
  - get_table(1: string dbname, 2: string tbl_name) returns the result struct
    {0: Table success, 1: MetaException o1, 2: NoSuchObjectException o2}; both exceptions
    are {1: string message}. An unknown method gets a TApplicationException
    {1: string message, 2: i32 type} (type 1 = UNKNOWN_METHOD) in an EXCEPTION message.
  - Table: 1 tableName, 2 dbName, 3 owner, 4 createTime i32, 5 lastAccessTime i32,
    6 retention i32, 7 sd StorageDescriptor, 8 partitionKeys list<FieldSchema>,
    9 parameters map<string,string>, 10 viewOriginalText, 11 viewExpandedText,
    12 tableType, 13 privileges PrincipalPrivilegeSet, 14 temporary bool,
    15 rewriteEnabled bool, ... The answers carry all of them (plus fields of types a
    client does not expect, with ids no IDL version has) so a client must skip nested
    structs, lists, sets and maps correctly to find the fields it reads.

A request that does not decode makes the server close the connection (as Thrift servers do).

Config (a dict): framed (bool), tables {"db/table": {"metadata_location", "table_type",
"location"}} (table_type None leaves the parameter out), silent (accept connections, read
requests, never answer), drop_first (close that many connections after reading their
request, without answering). server.stats: connections, calls [(method, db, table)].
"""
import socket
import socketserver
import struct
import threading

STOP, BOOL, BYTE, DOUBLE, I16, I32, I64, STRING, STRUCT, MAP, SET, LIST = \
    0, 2, 3, 4, 6, 8, 10, 11, 12, 13, 14, 15
CALL, REPLY, EXCEPTION = 1, 2, 3
VERSION_1 = 0x80010000


class ProtocolError(Exception):
    pass


# ---- writer ------------------------------------------------------------------------------

class W:
    def __init__(self):
        self.b = bytearray()

    def i8(self, v):
        self.b += struct.pack(">b", v)

    def i16(self, v):
        self.b += struct.pack(">h", v)

    def i32(self, v):
        self.b += struct.pack(">i", v)

    def i64(self, v):
        self.b += struct.pack(">q", v)

    def double(self, v):
        self.b += struct.pack(">d", v)

    def string(self, s):
        data = s.encode() if isinstance(s, str) else s
        self.i32(len(data))
        self.b += data

    def field(self, ftype, fid):
        self.i8(ftype)
        self.i16(fid)

    def stop(self):
        self.i8(STOP)

    def map_header(self, kt, vt, n):
        self.i8(kt)
        self.i8(vt)
        self.i32(n)

    def list_header(self, et, n):
        self.i8(et)
        self.i32(n)

    def message(self, name, mtype, seqid):
        self.i32(struct.unpack(">i", struct.pack(">I", VERSION_1 | mtype))[0])
        self.string(name)
        self.i32(seqid)


def put_str_map(w, d):
    w.map_header(STRING, STRING, len(d))
    for k, v in d.items():
        w.string(k)
        w.string(v)


def put_field_schema(w, name, typ, comment):
    w.field(STRING, 1); w.string(name)
    w.field(STRING, 2); w.string(typ)
    w.field(STRING, 3); w.string(comment)
    w.stop()


def put_storage_descriptor(w, location):
    w.field(LIST, 1)  # cols
    w.list_header(STRUCT, 2)
    put_field_schema(w, "i", "int", "")
    put_field_schema(w, "s", "string", "a column")
    w.field(STRING, 2); w.string(location)
    w.field(STRING, 3); w.string("org.apache.hadoop.mapred.FileInputFormat")
    w.field(STRING, 4); w.string("org.apache.hadoop.mapred.FileOutputFormat")
    w.field(BOOL, 5); w.i8(0)
    w.field(I32, 6); w.i32(-1)
    w.field(STRUCT, 7)  # serdeInfo {1 name, 2 serializationLib, 3 parameters}
    w.field(STRING, 1); w.string("")
    w.field(STRING, 2); w.string("org.apache.iceberg.mr.hive.HiveIcebergSerDe")
    w.field(MAP, 3); put_str_map(w, {"serialization.format": "1"})
    w.stop()
    w.field(LIST, 8); w.list_header(STRING, 1); w.string("b")  # bucketCols
    w.field(LIST, 9); w.list_header(STRUCT, 1)  # sortCols list<Order{1 col, 2 order}>
    w.field(STRING, 1); w.string("i")
    w.field(I32, 2); w.i32(1)
    w.stop()
    w.field(MAP, 10); put_str_map(w, {})
    w.field(STRUCT, 11)  # skewedInfo {1 list<string>, 2 list<list<string>>, 3 map<list<string>,string>}
    w.field(LIST, 1); w.list_header(STRING, 0)
    w.field(LIST, 2); w.list_header(LIST, 1); w.list_header(STRING, 2); w.string("x"); w.string("y")
    w.field(MAP, 3); w.map_header(LIST, STRING, 1); w.list_header(STRING, 1); w.string("x")
    w.string("loc")
    w.stop()
    w.field(BOOL, 12); w.i8(0)
    w.stop()


def put_table(w, db, name, entry):
    w.field(STRING, 1); w.string(name)
    w.field(STRING, 2); w.string(db)
    w.field(STRING, 3); w.string("hive")
    w.field(I32, 4); w.i32(1700000000)
    w.field(I32, 5); w.i32(0)
    w.field(I32, 6); w.i32(0)
    w.field(STRUCT, 7); put_storage_descriptor(w, entry.get("location", ""))
    w.field(LIST, 8); w.list_header(STRUCT, 1); put_field_schema(w, "p", "string", "")
    params = {"EXTERNAL": "TRUE", "transient_lastDdlTime": "1700000000",
              "previous_metadata_location": "/nowhere/v0.metadata.json"}
    if entry.get("table_type") is not None:
        params["table_type"] = entry["table_type"]
    if entry.get("metadata_location") is not None:
        params["metadata_location"] = entry["metadata_location"]
    w.field(MAP, 9); put_str_map(w, params)
    w.field(STRING, 10); w.string("")
    w.field(STRING, 11); w.string("")
    w.field(STRING, 12); w.string("EXTERNAL_TABLE")
    # 13 privileges: PrincipalPrivilegeSet {1 map<string, list<PrivilegeGrantInfo>>, ...}
    w.field(STRUCT, 13)
    w.field(MAP, 1); w.map_header(STRING, LIST, 1); w.string("hive")
    w.list_header(STRUCT, 1)
    w.field(STRING, 1); w.string("SELECT")
    w.field(I32, 2); w.i32(0)
    w.field(STRING, 3); w.string("hive")
    w.field(I32, 4); w.i32(1)
    w.field(BOOL, 5); w.i8(1)
    w.stop()
    w.stop()
    w.field(BOOL, 14); w.i8(0)
    w.field(BOOL, 15); w.i8(0)
    # Fields no IDL version has, of every other type, to be skipped.
    w.field(I64, 90); w.i64(-5)
    w.field(DOUBLE, 91); w.double(2.5)
    w.field(I16, 92); w.i16(7)
    w.field(BYTE, 93); w.i8(-1)
    w.field(SET, 94); w.list_header(I16, 3); w.i16(1); w.i16(2); w.i16(3)
    w.field(MAP, 95); w.map_header(I32, STRUCT, 1); w.i32(1)
    w.field(STRING, 1); w.string("nested"); w.stop()
    w.field(STRING, 96); w.string("catName: hive")
    w.stop()


# ---- reader over a socket ----------------------------------------------------------------

class R:
    def __init__(self, read):
        self.read = read

    def exact(self, n):
        data = self.read(n)
        if data is None or len(data) != n:
            raise EOFError
        return data

    def i8(self):
        return struct.unpack(">b", self.exact(1))[0]

    def i16(self):
        return struct.unpack(">h", self.exact(2))[0]

    def i32(self):
        return struct.unpack(">i", self.exact(4))[0]

    def string(self):
        n = self.i32()
        if n < 0 or n > (1 << 20):
            raise ProtocolError("bad string length %d" % n)
        return self.exact(n).decode()

    def skip(self, t, depth=0):
        if depth > 32:
            raise ProtocolError("too deep")
        sizes = {BOOL: 1, BYTE: 1, I16: 2, I32: 4, I64: 8, DOUBLE: 8}
        if t in sizes:
            self.exact(sizes[t])
        elif t == STRING:
            self.string()
        elif t == STRUCT:
            while True:
                ft = self.i8()
                if ft == STOP:
                    return
                self.i16()
                self.skip(ft, depth + 1)
        elif t == MAP:
            kt, vt, n = self.i8(), self.i8(), self.i32()
            for _ in range(n):
                self.skip(kt, depth + 1)
                self.skip(vt, depth + 1)
        elif t in (SET, LIST):
            et, n = self.i8(), self.i32()
            for _ in range(n):
                self.skip(et, depth + 1)
        else:
            raise ProtocolError("unknown type %d" % t)

    def message(self):
        word = self.i32() & 0xffffffff
        if word & 0xffff0000 != VERSION_1:
            raise ProtocolError("not a strict binary message: 0x%08x" % word)
        name = self.string()
        seqid = self.i32()
        return name, word & 0xff, seqid

    def args(self):
        """The fields of an argument struct: {id: value} for strings, others skipped."""
        out = {}
        while True:
            ft = self.i8()
            if ft == STOP:
                return out
            fid = self.i16()
            if ft == STRING:
                out[fid] = self.string()
            else:
                self.skip(ft)


# ---- server ------------------------------------------------------------------------------

def reply_get_table(cfg, args, seqid):
    db, name = args.get(1, ""), args.get(2, "")
    w = W()
    w.message("get_table", REPLY, seqid)
    entry = cfg["tables"].get(db + "/" + name)
    if entry is None:
        w.field(STRUCT, 2)  # o2: NoSuchObjectException
        w.field(STRING, 1); w.string("%s.%s table not found" % (db, name))
        w.stop()
    else:
        w.field(STRUCT, 0)
        put_table(w, db, name, entry)
    w.stop()
    return bytes(w.b)


def reply_unknown(name, seqid):
    w = W()
    w.message(name, EXCEPTION, seqid)
    w.field(STRING, 1); w.string("Invalid method name: '%s'" % name)
    w.field(I32, 2); w.i32(1)
    w.stop()
    return bytes(w.b)


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        srv = self.server
        cfg = srv.cfg
        with srv.lock:
            srv.stats["connections"] += 1
            drop = srv.drop_left > 0
            if drop:
                srv.drop_left -= 1
        f = self.request.makefile("rb")
        try:
            while True:
                if cfg.get("framed"):
                    head = f.read(4)
                    if len(head) != 4:
                        return
                    n = struct.unpack(">i", head)[0]
                    if n < 0 or n > (16 << 20):
                        return  # what Thrift does with a frame it cannot take
                    frame = f.read(n)
                    if len(frame) != n:
                        return
                    pos = [0]

                    def read(k, frame=frame, pos=pos):
                        d = frame[pos[0]:pos[0] + k]
                        pos[0] += k
                        return d
                    r = R(read)
                else:
                    r = R(f.read)
                name, mtype, seqid = r.message()
                if mtype != CALL:
                    return
                args = r.args()
                with srv.lock:
                    srv.stats["calls"].append([name, args.get(1), args.get(2)])
                if drop:
                    return
                if cfg.get("silent"):
                    srv.release.wait(30)
                    return
                body = reply_get_table(cfg, args, seqid) if name == "get_table" \
                    else reply_unknown(name, seqid)
                if cfg.get("framed"):
                    body = struct.pack(">i", len(body)) + body
                self.request.sendall(body)
        except (EOFError, ProtocolError, ConnectionError, UnicodeDecodeError):
            return
        finally:
            f.close()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, cfg):
        super().__init__(("127.0.0.1", 0), Handler)
        self.cfg = cfg
        self.lock = threading.Lock()
        self.stats = {"connections": 0, "calls": []}
        self.drop_left = cfg.get("drop_first", 0)
        self.release = threading.Event()

    def shutdown(self):
        self.release.set()
        super().shutdown()
        self.server_close()


def start(cfg):
    """Starts a server on 127.0.0.1; returns (server, port)."""
    srv = Server(cfg)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]


def call_get_table(port, db, table, framed=False, seqid=1):
    """A minimal client (for the server's self-test): the reply's raw message bytes."""
    w = W()
    w.message("get_table", CALL, seqid)
    w.field(STRING, 1); w.string(db)
    w.field(STRING, 2); w.string(table)
    w.stop()
    body = bytes(w.b)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(struct.pack(">i", len(body)) + body if framed else body)
        f = s.makefile("rb")
        if framed:
            n = struct.unpack(">i", f.read(4))[0]
            return f.read(n)
        # Unframed: decode to find the end.
        data = bytearray()

        def read(k):
            d = f.read(k)
            data.extend(d)
            return d
        r = R(read)
        r.message()
        r.skip(STRUCT)
        return bytes(data)
