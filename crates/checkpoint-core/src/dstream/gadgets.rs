//! The one list of known Java deserialization gadget classes: classes whose `readObject` (or the methods
//! a deserialized graph of them calls) has been used to run code or reach the network when an untrusted
//! stream is read. A Spark checkpoint never needs any of them; finding one means the file was made or
//! changed by someone else, or the job serializes things it should not.
//!
//! Sources (public, read for this list; class names only):
//! - ysoserial payloads, `src/main/java/ysoserial/payloads/*.java` (github.com/frohoff/ysoserial):
//!   CommonsCollections1-7, CommonsBeanutils1, Groovy1, Spring1/2, C3P0, ROME, BeanShell1, Hibernate1/2,
//!   Clojure, Jython1, MozillaRhino1/2, JSON1, FileUpload1, Wicket1, JBossInterceptors1, JavassistWeld1,
//!   Myfaces1/2, Vaadin1, Click1, Jdk7u21, JRMPClient/JRMPListener.
//! - marshalsec, "Java Unmarshaller Security" (github.com/mbechler/marshalsec): XBean, Resin, JNDI
//!   `JdbcRowSetImpl`, Spring `PartiallyComparableAdvisorHolder`.
//! - Java-Deserialization-Cheat-Sheet (github.com/GrrrDog/Java-Deserialization-Cheat-Sheet).
//! - jackson-databind `SubTypeValidator` block list (github.com/FasterXML/jackson-databind), the shared
//!   entries that are also Java-serialization gadgets.

/// One gadget entry: a class name, or a package prefix ending with `.`, and the chain it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gadget {
    /// Exact class name, or a prefix when it ends with `.`.
    pub class: &'static str,
    /// The chain (ysoserial payload or library) it is known from.
    pub chain: &'static str,
}

const fn g(class: &'static str, chain: &'static str) -> Gadget {
    Gadget { class, chain }
}

/// The list.
pub const GADGETS: &[Gadget] = &[
    g("org.apache.commons.collections.functors.", "ysoserial CommonsCollections1-7 (commons-collections 3 transformers)"),
    g("org.apache.commons.collections.map.LazyMap", "ysoserial CommonsCollections1/3/5/6/7"),
    g("org.apache.commons.collections.map.TransformedMap", "CommonsCollections TransformedMap chain"),
    g("org.apache.commons.collections.keyvalue.TiedMapEntry", "ysoserial CommonsCollections5/6"),
    g("org.apache.commons.collections.comparators.TransformingComparator", "ysoserial CommonsCollections2/4"),
    g("org.apache.commons.collections4.functors.", "ysoserial CommonsCollections2/4 (commons-collections4 transformers)"),
    g("org.apache.commons.collections4.comparators.TransformingComparator", "ysoserial CommonsCollections2/4"),
    g("org.apache.commons.collections4.map.LazyMap", "commons-collections4 LazyMap chain"),
    g("org.apache.commons.beanutils.BeanComparator", "ysoserial CommonsBeanutils1"),
    g("com.sun.org.apache.xalan.internal.xsltc.trax.TemplatesImpl", "TemplatesImpl bytecode loading (many chains)"),
    g("com.sun.org.apache.xalan.internal.xsltc.trax.TrAXFilter", "ysoserial CommonsCollections3/4"),
    g("org.apache.xalan.xsltc.trax.TemplatesImpl", "TemplatesImpl (Xalan) bytecode loading"),
    g("sun.reflect.annotation.AnnotationInvocationHandler", "ysoserial CommonsCollections1, Jdk7u21, Groovy1, Spring1"),
    g("javax.management.BadAttributeValueExpException", "ysoserial CommonsCollections5 trigger"),
    g("org.codehaus.groovy.runtime.ConvertedClosure", "ysoserial Groovy1"),
    g("org.codehaus.groovy.runtime.MethodClosure", "ysoserial Groovy1"),
    g("org.springframework.core.SerializableTypeWrapper$MethodInvokeTypeProvider", "ysoserial Spring1/2"),
    g("org.springframework.beans.factory.support.AutowireUtils$ObjectFactoryDelegatingInvocationHandler", "ysoserial Spring1"),
    g("org.springframework.aop.framework.JdkDynamicAopProxy", "ysoserial Spring2"),
    g("org.springframework.aop.aspectj.autoproxy.AspectJAwareAdvisorAutoProxyCreator$PartiallyComparableAdvisorHolder", "marshalsec SpringPartiallyComparableAdvisorHolder"),
    g("com.mchange.v2.c3p0.impl.PoolBackedDataSourceBase", "ysoserial C3P0"),
    g("com.mchange.v2.c3p0.PoolBackedDataSource", "ysoserial C3P0"),
    g("com.mchange.v2.naming.ReferenceIndirector$ReferenceSerialized", "ysoserial C3P0"),
    g("com.sun.syndication.feed.impl.ObjectBean", "ysoserial ROME"),
    g("com.sun.syndication.feed.impl.ToStringBean", "ysoserial ROME"),
    g("com.sun.syndication.feed.impl.EqualsBean", "ysoserial ROME"),
    g("com.rometools.rome.feed.impl.ObjectBean", "ROME (rometools) chain"),
    g("com.rometools.rome.feed.impl.ToStringBean", "ROME (rometools) chain"),
    g("bsh.XThis", "ysoserial BeanShell1"),
    g("bsh.Interpreter", "ysoserial BeanShell1"),
    g("org.hibernate.engine.spi.TypedValue", "ysoserial Hibernate1/2"),
    g("org.hibernate.tuple.component.AbstractComponentTuplizer", "ysoserial Hibernate1"),
    g("org.hibernate.property.access.spi.GetterMethodImpl", "ysoserial Hibernate1"),
    g("clojure.core$comp", "ysoserial Clojure"),
    g("clojure.main$eval_opt", "ysoserial Clojure"),
    g("org.python.core.PyFunction", "ysoserial Jython1"),
    g("org.python.core.PyBytecode", "ysoserial Jython1"),
    g("org.mozilla.javascript.NativeJavaObject", "ysoserial MozillaRhino1/2"),
    g("org.mozilla.javascript.NativeError", "ysoserial MozillaRhino1"),
    g("net.sf.json.JSONObject", "ysoserial JSON1"),
    g("org.apache.commons.fileupload.disk.DiskFileItem", "ysoserial FileUpload1 (file write)"),
    g("org.apache.wicket.util.upload.DiskFileItem", "ysoserial Wicket1 (file write)"),
    g("org.jboss.interceptor.proxy.InterceptorMethodHandler", "ysoserial JBossInterceptors1"),
    g("org.jboss.weld.interceptor.proxy.InterceptorMethodHandler", "ysoserial JavassistWeld1"),
    g("org.apache.myfaces.view.facelets.el.ValueExpressionMethodExpression", "ysoserial Myfaces1/2"),
    g("com.vaadin.data.util.NestedMethodProperty", "ysoserial Vaadin1"),
    g("com.vaadin.data.util.PropertysetItem", "ysoserial Vaadin1"),
    g("org.apache.click.control.Column$ColumnComparator", "ysoserial Click1"),
    g("com.sun.rowset.JdbcRowSetImpl", "marshalsec JNDI lookup (JdbcRowSetImpl)"),
    g("org.apache.xbean.naming.context.ContextUtil$ReadOnlyBinding", "marshalsec XBean JNDI"),
    g("com.caucho.naming.QName", "marshalsec Resin"),
    g("sun.rmi.server.UnicastRef", "ysoserial JRMPClient (outbound RMI call)"),
    g("java.rmi.server.RemoteObjectInvocationHandler", "ysoserial JRMPClient"),
    g("sun.rmi.server.ActivationGroupImpl", "ysoserial JRMPListener"),
    g("java.rmi.server.UnicastRemoteObject", "ysoserial JRMPListener"),
    g("com.alibaba.fastjson.JSONArray", "fastjson native-deserialization chain"),
];

/// The gadget entry a class name matches, when it matches one.
pub fn gadget(name: &str) -> Option<&'static Gadget> {
    GADGETS.iter().find(|g| if g.class.ends_with('.') { name.starts_with(g.class) } else { name == g.class })
}

/// JDK classes that no Spark checkpoint holds and that give a stream reach beyond data: reflection,
/// process launching, class loading, naming and remote calls, scripting, management beans.
pub const UNUSUAL_JDK_PREFIXES: &[&str] = &[
    "java.lang.reflect.",
    "java.lang.ProcessBuilder",
    "java.lang.Runtime",
    "java.lang.ClassLoader",
    "java.net.URLClassLoader",
    "java.util.ServiceLoader",
    "java.rmi.",
    "sun.rmi.",
    "javax.naming.",
    "com.sun.jndi.",
    "javax.script.",
    "java.beans.",
    "javax.management.",
    "javax.xml.transform.",
    "com.sun.org.apache.",
    "sun.misc.",
    "jdk.internal.",
];

/// True for a JDK class of [`UNUSUAL_JDK_PREFIXES`].
pub fn unusual_jdk(name: &str) -> bool {
    UNUSUAL_JDK_PREFIXES.iter().any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_matches_classes_and_package_prefixes_only() {
        assert!(gadget("org.apache.commons.collections.functors.InvokerTransformer").is_some());
        assert!(gadget("org.apache.commons.collections.functors.ChainedTransformer").is_some());
        assert!(gadget("com.sun.org.apache.xalan.internal.xsltc.trax.TemplatesImpl").is_some());
        assert!(gadget("org.codehaus.groovy.runtime.MethodClosure").is_some());
        assert!(gadget("org.apache.commons.collections.map.HashedMap").is_none());
        assert!(gadget("org.apache.spark.streaming.Checkpoint").is_none());
        assert!(gadget("java.util.HashMap").is_none());
        let mut seen = std::collections::BTreeSet::new();
        for g in GADGETS {
            assert!(seen.insert(g.class), "{} twice", g.class);
            assert!(!g.chain.is_empty());
        }
    }
}
