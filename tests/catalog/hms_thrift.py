"""Hive Metastore test servers built on the real Apache Thrift library (Debian
thrift-compiler + python3-thrift), next to hive_server.py's hand-written one.

generate(dir) writes an IDL with Hive's field ids and types for get_table and the structs
it returns (hive_metastore.thrift: Table, StorageDescriptor, SerDeInfo, FieldSchema,
Order, MetaException, NoSuchObjectException), runs `thrift --gen py` on it and imports the
generated ThriftHiveMetastore module. Servers (all on 127.0.0.1, one thread each):
  start_plain(tables, framed)   TThreadedServer, TBufferedTransport or TFramedTransport
  start_tls(tables, cert, key)  the same over TSSLServerSocket
  start_sasl(tables, framed)    Thrift's SASL transport as Hive uses it (status byte
                                START/OK/BAD/ERROR/COMPLETE + 4-byte length + payload) with
                                the GSSAPI mechanism through python3-gssapi (the acceptor's
                                keytab from KRB5_KTNAME), then length-framed messages handed
                                to the generated Processor.
`tables` maps "db/name" to {"metadata_location", "table_type", "location"}. Each server
records stats: calls (db, table) and, for SASL, the authenticated client principals and
refused handshakes.
"""
import os
import socket
import socketserver
import struct
import subprocess
import sys
import threading

IDL = """
namespace py hms

struct FieldSchema { 1: string name, 2: string type, 3: string comment }
struct SerDeInfo { 1: string name, 2: string serializationLib, 3: map<string,string> parameters }
struct Order { 1: string col, 2: i32 order }
struct StorageDescriptor {
  1: list<FieldSchema> cols, 2: string location, 3: string inputFormat,
  4: string outputFormat, 5: bool compressed, 6: i32 numBuckets, 7: SerDeInfo serdeInfo,
  8: list<string> bucketCols, 9: list<Order> sortCols, 10: map<string,string> parameters,
  12: optional bool storedAsSubDirectories
}
struct Table {
  1: string tableName, 2: string dbName, 3: string owner, 4: i32 createTime,
  5: i32 lastAccessTime, 6: i32 retention, 7: StorageDescriptor sd,
  8: list<FieldSchema> partitionKeys, 9: map<string,string> parameters,
  10: string viewOriginalText, 11: string viewExpandedText, 12: string tableType,
  14: optional bool temporary = false, 15: optional bool rewriteEnabled
}
exception MetaException { 1: string message }
exception NoSuchObjectException { 1: string message }
service ThriftHiveMetastore {
  Table get_table(1: string dbname, 2: string tbl_name)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)
}
"""

_mod = {}


def generate(workdir):
    if _mod:
        return _mod["svc"], _mod["tt"]
    os.makedirs(workdir, exist_ok=True)
    idl = os.path.join(workdir, "hms.thrift")
    with open(idl, "w") as f:
        f.write(IDL)
    subprocess.run(["thrift", "--gen", "py", "-out", workdir, idl], check=True,
                   capture_output=True, timeout=60)
    sys.path.insert(0, workdir)
    from hms import ThriftHiveMetastore, ttypes  # noqa: E402
    _mod["svc"], _mod["tt"] = ThriftHiveMetastore, ttypes
    return ThriftHiveMetastore, ttypes


class Handler:
    def __init__(self, tables, stats):
        self.tables, self.stats = tables, stats

    def get_table(self, dbname, tbl_name):
        tt = _mod["tt"]
        self.stats["calls"].append((dbname, tbl_name))
        e = self.tables.get(dbname + "/" + tbl_name)
        if e is None:
            raise tt.NoSuchObjectException(message=f"{dbname}.{tbl_name} table not found")
        params = {"EXTERNAL": "TRUE", "numFiles": "3"}
        if e.get("table_type"):
            params["table_type"] = e["table_type"]
        if e.get("metadata_location"):
            params["metadata_location"] = e["metadata_location"]
        cols = [tt.FieldSchema(name="i", type="int", comment=None),
                tt.FieldSchema(name="s", type="string", comment="c")]
        sd = tt.StorageDescriptor(
            cols=cols, location=e.get("location", "/x"),
            inputFormat="org.apache.hadoop.mapred.FileInputFormat",
            outputFormat="org.apache.hadoop.mapred.FileOutputFormat", compressed=False,
            numBuckets=-1,
            serdeInfo=tt.SerDeInfo(name=None, serializationLib="org.apache.hadoop.hive."
                                   "serde2.lazy.LazySimpleSerDe", parameters={"a": "b"}),
            bucketCols=[], sortCols=[tt.Order(col="i", order=1)], parameters={},
            storedAsSubDirectories=False)
        return tt.Table(tableName=tbl_name, dbName=dbname, owner="hive", createTime=1700000000,
                        lastAccessTime=0, retention=0, sd=sd, partitionKeys=[],
                        parameters=params, viewOriginalText=None, viewExpandedText=None,
                        tableType="EXTERNAL_TABLE", temporary=False)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def _serve(server_transport, tables, framed):
    from thrift.protocol import TBinaryProtocol
    from thrift.server import TServer
    from thrift.transport import TTransport
    svc, _ = _mod["svc"], _mod["tt"]
    stats = {"calls": []}
    tf = TTransport.TFramedTransportFactory() if framed else TTransport.TBufferedTransportFactory()
    server = TServer.TThreadedServer(svc.Processor(Handler(tables, stats)), server_transport, tf,
                                     TBinaryProtocol.TBinaryProtocolFactory(), daemon=True)
    threading.Thread(target=server.serve, daemon=True).start()
    return stats


def _wait_port(port):
    import time
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)


def start_plain(tables, framed):
    from thrift.transport import TSocket
    port = free_port()
    stats = _serve(TSocket.TServerSocket(host="127.0.0.1", port=port), tables, framed)
    _wait_port(port)
    return stats, port


def start_tls(tables, cert, key):
    from thrift.transport import TSSLSocket
    port = free_port()
    stats = _serve(TSSLSocket.TSSLServerSocket(host="127.0.0.1", port=port, certfile=cert,
                                               keyfile=key), tables, False)
    _wait_port(port)
    return stats, port


# ---- SASL GSSAPI --------------------------------------------------------------------------

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5


class _SaslHandler(socketserver.BaseRequestHandler):
    def _exact(self, n):
        b = b""
        while len(b) < n:
            k = self.request.recv(n - len(b))
            if not k:
                raise EOFError
            b += k
        return b

    def _recv(self):
        st = self._exact(1)[0]
        if not START <= st <= COMPLETE:  # like Thrift's TSaslTransport: no SASL client
            self._send(ERROR, b"Invalid status %d" % st)
            raise EOFError
        n = struct.unpack(">I", self._exact(4))[0]
        return st, self._exact(n)

    def _send(self, st, payload):
        self.request.sendall(bytes([st]) + struct.pack(">I", len(payload)) + payload)

    def handle(self):
        import gssapi
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TTransport
        srv = self.server
        try:
            st, mech = self._recv()
            if st != START or mech != b"GSSAPI":
                return self._send(BAD, b"expected START GSSAPI")
            ctx = gssapi.SecurityContext(creds=srv.creds, usage="accept")
            st, tok = self._recv()
            try:
                out = ctx.step(tok)
                while not ctx.complete:
                    self._send(OK, out or b"")
                    st, tok = self._recv()
                    out = ctx.step(tok)
            except gssapi.exceptions.GSSError as e:
                srv.stats["refused"].append(str(e))
                return self._send(ERROR, ("GSS accept failed: " + str(e)).encode()[:500])
            if out:
                self._send(OK, out)
                st, tok = self._recv()  # the client's empty answer
            # RFC 4752: offer "no security layer" with a 64 KiB max buffer, integrity-protected
            self._send(OK, ctx.wrap(b"\x01\x01\x00\x00", False).message)
            st, tok = self._recv()
            plain = ctx.unwrap(tok).message
            if st not in (OK, COMPLETE) or len(plain) < 4 or plain[0] != 1:
                return self._send(BAD, b"bad security layer answer")
            srv.stats["principals"].append(str(ctx.initiator_name))
            self._send(COMPLETE, b"")
            proc = _mod["svc"].Processor(Handler(srv.tables, srv.stats))
            while True:
                n = struct.unpack(">I", self._exact(4))[0]
                data = self._exact(n)
                if srv.framed:
                    assert struct.unpack(">I", data[:4])[0] == n - 4
                    data = data[4:]
                itr, otr = TTransport.TMemoryBuffer(data), TTransport.TMemoryBuffer()
                proc.process(TBinaryProtocol.TBinaryProtocol(itr),
                             TBinaryProtocol.TBinaryProtocol(otr))
                reply = otr.getvalue()
                if srv.framed:
                    reply = struct.pack(">I", len(reply)) + reply
                self.request.sendall(struct.pack(">I", len(reply)) + reply)
        except EOFError:
            return


class _SaslServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def start_sasl(tables, framed=False):
    import gssapi
    srv = _SaslServer(("127.0.0.1", 0), _SaslHandler)
    srv.creds = gssapi.Credentials(usage="accept")
    srv.tables, srv.framed = tables, framed
    srv.stats = {"calls": [], "principals": [], "refused": []}
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]
