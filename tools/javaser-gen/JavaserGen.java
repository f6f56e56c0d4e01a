// Writes small Java serialization streams with a real JVM's ObjectOutputStream, for the tests of
// crates/checkpoint-core/src/javaser (where the real DStream checkpoints do not reach: enums, proxies,
// Externalizable, long strings, arrays of every type, back-references, resets, exceptions in the stream).
//
// For every stream <name>.ser it also writes <name>.expect: what this program wrote, one fact per line,
// taken from the JVM (ObjectStreamClass.lookup(..).getSerialVersionUID(), the values themselves), so the
// tests compare our reader against the JVM and never against our own output.
//
//   javac -d /tmp/javaser-gen tools/javaser-gen/JavaserGen.java
//   java -cp /tmp/javaser-gen JavaserGen tools/javaser-gen/out
//
// Line formats of <name>.expect:
//   class <fqn> <serialVersionUID>        a class descriptor the stream holds
//   proxy <iface>,<iface>                 a dynamic proxy descriptor and its interfaces
//   enum <fqn> <CONSTANT>                 an enum constant written (fqn = the enum type)
//   string <utf-8 hex>                    a string written (short or long)
//   longstring <utf-8 byte length> <hex>  a string written as TC_LONGSTRING, and its first 30 bytes
//   array <descriptor> <v,v,...>          a primitive array's elements as integers (float/double: raw bits)
//   objarray <descriptor> <length>        an object array and its length
//   block <hex>                           bytes the stream's block data holds (writeObject/writeExternal data)
//   selfref <fqn> <field>                 an object whose field points to itself
//   shared <fqn> <field1> <field2>        an object whose two fields point to the same object
//   resets <n>                            TC_RESET count
//   exception <fqn>                       the Throwable a TC_EXCEPTION carries
import java.io.*;
import java.lang.reflect.*;
import java.nio.charset.StandardCharsets;
import java.util.*;

public class JavaserGen {
    enum Color { RED, GREEN { @Override public String toString() { return "green"; } }, BLUE }

    static class Handler implements InvocationHandler, Serializable {
        private static final long serialVersionUID = 7L;
        String tag = "handler-tag";
        public Object invoke(Object p, Method m, Object[] a) { return null; }
    }

    static class Ext implements Externalizable {
        int n = 42;
        String s = "ext-utf";
        public Ext() {}
        public void writeExternal(ObjectOutput out) throws IOException {
            out.writeInt(n);
            out.writeUTF(s);
            out.writeObject(List.of("inner"));
        }
        public void readExternal(ObjectInput in) throws IOException {}
    }

    static class Node implements Serializable {
        private static final long serialVersionUID = -3L;
        String name;
        Node next;
        Object left, right;
        Node(String name) { this.name = name; }
    }

    static class Custom implements Serializable {
        private static final long serialVersionUID = 123456789L;
        int a = 5;
        private void writeObject(ObjectOutputStream out) throws IOException {
            out.defaultWriteObject();
            out.writeLong(0x0102030405060708L);
            out.writeObject("after-default");
        }
    }

    static class Fails implements Serializable {
        private static final long serialVersionUID = 1L;
        private void writeObject(ObjectOutputStream out) throws IOException {
            throw new InvalidObjectException("refused on purpose");
        }
    }

    static final List<String> expect = new ArrayList<>();

    static void cls(Class<?> c) {
        expect.add("class " + c.getName() + " " + ObjectStreamClass.lookupAny(c).getSerialVersionUID());
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x));
        return sb.toString();
    }

    static void str(String s) { expect.add("string " + hex(s.getBytes(StandardCharsets.UTF_8))); }

    interface Write { void to(ObjectOutputStream o) throws IOException; }

    static void write(File dir, String name, Write w) throws IOException {
        expect.clear();
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        ObjectOutputStream oos = new ObjectOutputStream(bos);
        try {
            w.to(oos);
        } catch (InvalidObjectException e) {
            // the stream now ends with TC_EXCEPTION (ObjectOutputStream.writeFatalException)
        }
        oos.close();
        try (FileOutputStream f = new FileOutputStream(new File(dir, name + ".ser"))) { f.write(bos.toByteArray()); }
        try (PrintWriter p = new PrintWriter(new File(dir, name + ".expect"), "UTF-8")) {
            for (String l : expect) p.println(l);
        }
    }

    static String ints(long... v) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < v.length; i++) { if (i > 0) sb.append(','); sb.append(v[i]); }
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        dir.mkdirs();
        write(dir, "enums", o -> {
            o.writeObject(Color.RED);
            o.writeObject(Color.GREEN);
            o.writeObject(new Color[] {Color.BLUE, Color.RED});
            o.writeObject(new EnumMap<Color, String>(Map.of(Color.BLUE, "b")));
            expect.add("enum " + Color.class.getName() + " RED");
            expect.add("enum " + Color.class.getName() + " GREEN");
            expect.add("enum " + Color.class.getName() + " BLUE");
            expect.add("class " + Color.class.getName() + " 0");
            // GREEN has a body (class Color$1): ObjectOutputStream.writeEnum writes the enum type's descriptor.
            expect.add("class java.lang.Enum 0");
            expect.add("objarray [L" + Color.class.getName() + "; 2");
            cls(EnumMap.class);
            str("b");
        });
        write(dir, "proxy", o -> {
            Object p = Proxy.newProxyInstance(JavaserGen.class.getClassLoader(),
                new Class<?>[] {Runnable.class, Comparable.class}, new Handler());
            o.writeObject(p);
            expect.add("proxy java.lang.Runnable,java.lang.Comparable");
            cls(Proxy.class);
            cls(Handler.class);
            str("handler-tag");
        });
        write(dir, "externalizable", o -> {
            o.writeObject(new Ext());
            cls(Ext.class);
            expect.add("block " + hex(new byte[] {0, 0, 0, 42}) + "0007" + hex("ext-utf".getBytes(StandardCharsets.UTF_8)));
            str("inner");
        });
        write(dir, "strings", o -> {
            StringBuilder big = new StringBuilder();
            for (int i = 0; i < 70000; i++) big.append((char) ('a' + i % 26));
            String bigs = big.toString();
            o.writeObject(bigs);
            String odd = "nul\u0000 é € \uD83D\uDE00 end";
            o.writeObject(odd);
            expect.add("longstring 70000 " + hex(bigs.substring(0, 30).getBytes(StandardCharsets.UTF_8)));
            str(odd);
        });
        write(dir, "arrays", o -> {
            o.writeObject(new byte[] {1, -2, 127});
            o.writeObject(new char[] {'a', '\u20ac'});
            o.writeObject(new short[] {-300, 300});
            o.writeObject(new int[] {1, -1, Integer.MAX_VALUE});
            o.writeObject(new long[] {Long.MIN_VALUE, 7});
            o.writeObject(new float[] {1.5f});
            o.writeObject(new double[] {-0.25});
            o.writeObject(new boolean[] {true, false, true});
            o.writeObject(new String[][] {{"x"}, {"y", "z"}});
            o.writeObject(new int[][] {{1}, {}});
            expect.add("array [B " + ints(1, -2, 127));
            expect.add("array [C " + ints('a', '\u20ac'));
            expect.add("array [S " + ints(-300, 300));
            expect.add("array [I " + ints(1, -1, Integer.MAX_VALUE));
            expect.add("array [J " + ints(Long.MIN_VALUE, 7));
            expect.add("array [F " + ints(Float.floatToRawIntBits(1.5f)));
            expect.add("array [D " + ints(Double.doubleToRawLongBits(-0.25)));
            expect.add("array [Z " + ints(1, 0, 1));
            expect.add("objarray [[Ljava.lang.String; 2");
            expect.add("objarray [Ljava.lang.String; 1");
            expect.add("objarray [Ljava.lang.String; 2");
            expect.add("objarray [[I 2");
            expect.add("array [I " + ints(1));
            expect.add("class [B " + ObjectStreamClass.lookup(byte[].class).getSerialVersionUID());
            expect.add("class [[Ljava.lang.String; " + ObjectStreamClass.lookup(String[][].class).getSerialVersionUID());
            str("x"); str("y"); str("z");
        });
        write(dir, "backrefs", o -> {
            Node self = new Node("self");
            self.next = self;
            String shared = "shared-string";
            self.left = shared;
            self.right = shared;
            o.writeObject(self);
            Custom c = new Custom();
            o.writeObject(c);
            o.writeObject(c);
            o.reset();
            o.writeObject(new HashMap<String, Integer>(Map.of("k", 1)));
            o.writeObject(new ArrayList<>(List.of(self)));
            expect.add("selfref " + Node.class.getName() + " next");
            expect.add("shared " + Node.class.getName() + " left right");
            expect.add("block 0102030405060708");
            expect.add("resets 1");
            cls(Node.class);
            cls(Custom.class);
            cls(HashMap.class);
            cls(Integer.class);
            cls(Number.class);
            cls(ArrayList.class);
            str("self"); str("shared-string"); str("after-default"); str("k");
        });
        write(dir, "exception", o -> {
            expect.add("exception java.io.InvalidObjectException");
            cls(InvalidObjectException.class);
            cls(Throwable.class);
            str("before");
            str("refused on purpose");
            o.writeObject("before");
            o.writeObject(new Fails());
        });
    }
}
