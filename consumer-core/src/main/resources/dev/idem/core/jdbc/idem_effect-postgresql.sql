-- Idem's effect ledger (PostgreSQL). One row per applied effect, written in the handler's own
-- transaction; the primary key is what makes a second effect impossible. A dead-lettered key has a
-- row too (outcome 'dead', then 'dead-ok' once its compensation ran), so a lost Redis record
-- never repeats its dead letter or its compensation.
create table if not exists {table} (
    consumer_group  varchar(255) not null,
    topic           varchar(255) not null,
    idempotency_key varchar(512) not null,
    fence           bigint       not null,
    applied_at      timestamp with time zone not null,
    outcome         varchar(8)   not null default 'applied',
    primary key (consumer_group, topic, idempotency_key)
);
create index if not exists {index} on {table} (applied_at);
-- Ledgers created before dead keys were recorded gain the column.
alter table {table} add column if not exists outcome varchar(8) not null default 'applied';
