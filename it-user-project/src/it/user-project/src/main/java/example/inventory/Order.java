package example.inventory;

/** The payload of the orders topic, read with {@code PayloadCodec.json(Order.class)}. */
public record Order(String id, String sku, int quantity) {

    /** The JSON a producer sends. */
    public String json() {
        return "{\"id\":\"" + id + "\",\"sku\":\"" + sku + "\",\"quantity\":" + quantity + "}";
    }
}
