# Reads a training-record shard (records/src/shard.rs: bincode 2 standard, deflate) into dicts.
import struct, zlib, sys
def rd(path):
    b=open(path,'rb').read()
    assert b[:8]==b'CPRSHARD'
    hl,bl=struct.unpack('<QQ',b[16:32])
    body=zlib.decompress(b[32+hl:32+hl+bl],-15)
    i=0
    def vu():
        nonlocal i
        x=body[i]; i+=1
        if x<251: return x
        if x==251: v=struct.unpack('<H',body[i:i+2])[0]; i+=2; return v
        if x==252: v=struct.unpack('<I',body[i:i+4])[0]; i+=4; return v
        if x==253: v=struct.unpack('<Q',body[i:i+8])[0]; i+=8; return v
        raise Exception(x)
    def vs():
        u=vu(); return (u>>1) ^ -(u&1)
    def f32():
        nonlocal i
        v=struct.unpack('<f',body[i:i+4])[0]; i+=4; return v
    def s():
        nonlocal i
        n=vu(); v=body[i:i+n].decode(); i+=n; return v
    n=vu(); recs=[]
    for _ in range(n):
        sfen=s(); rep=body[i]; i+=1; ply=vu(); mp=vu()
        k=vu(); pol=[(vu(),f32()) for _ in range(k)]
        fs=body[i]; i+=1; sv=f32(); res=struct.unpack("<b",body[i:i+1])[0]; i+=1; st=s(); gid=vu()
        recs.append(dict(sfen=sfen,rep=rep,ply=ply,policy=pol,full=fs,sv=sv,res=res,gid=gid))
    return recs
