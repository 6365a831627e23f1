-- Idem's outbox (PostgreSQL). One row per message sent, written in the sender's own transaction, so
-- it commits with the effect or not at all; the relay publishes committed rows in position order per
-- partition (a hash of destination and key) and deletes them, or marks them sent. Its columns are
-- those Debezium's Outbox Event Router reads (id, destination as route.by.field, message_key,
-- payload; docs/guide/outbox.md). The unique id makes a second copy of a message impossible.
create table if not exists {table} (
    position     bigserial    primary key,
    id           varchar(255) not null,
    destination  varchar(249) not null,
    message_key  varchar(512),
    payload      bytea,
    headers      text,
    traceparent  varchar(55),
    partition_no smallint     not null,
    created_at   timestamp with time zone not null,
    state        varchar(4)   not null default 'new',
    attempts     integer      not null default 0,
    last_error   varchar(1000),
    sent_at      timestamp with time zone
);
create unique index if not exists {prefix}_id on {table} (id);
create index if not exists {prefix}_unsent on {table} (partition_no, position) where state = 'new';
-- The relay reads the oldest unsent rows first, whatever their partition.
create index if not exists {prefix}_next on {table} (position) where state = 'new';
-- One row per partition: a relay works on a partition while it holds its row's lock, so relays in
-- many processes share the table, none publishing what another publishes.
create table if not exists {table}_relay (
    partition_no smallint primary key,
    served_at    timestamp with time zone
);
insert into {table}_relay (partition_no) select p from generate_series(0, 15) p on conflict do nothing;
