package example.spring;

/** An order as the producers send it, in JSON. */
public record Order(String id, String sku, int quantity) {
}
