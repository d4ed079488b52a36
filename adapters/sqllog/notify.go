package sqllog

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Notifications implements ports.LogNotifier. On Postgres the first call
// connects the LISTEN connection and returns only once it listens, so any
// Append after the call returns is seen; on SQLite, Append on this handle
// wakes subscribers and other processes are found by polling.
func (l *Log) Notifications(ctx context.Context) (<-chan struct{}, error) {
	if l.dialect.listenURL != "" {
		if err := l.startListener(ctx); err != nil {
			return nil, wrap("notifications", err)
		}
	}
	ch, err := l.hub.Subscribe(ctx)
	if err != nil {
		return nil, wrap("notifications", ErrClosed)
	}
	return ch, nil
}

// startListener connects the shared LISTEN connection once per Log. A failed
// first connect is returned and retried by the next call.
func (l *Log) startListener(ctx context.Context) error {
	l.listenMu.Lock()
	defer l.listenMu.Unlock()
	if l.life.Err() != nil {
		return ErrClosed
	}
	if l.listenOn {
		return nil
	}
	conn, err := l.listen(ctx)
	if err != nil {
		return err
	}
	l.listenOn = true
	l.listenWG.Add(1)
	go l.listenLoop(conn)
	return nil
}

// listen opens a dedicated connection (LISTEN is per session, so it cannot
// come from the pool) and subscribes it to the channel.
func (l *Log) listen(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	stop := context.AfterFunc(l.life, cancel)
	defer stop()
	conn, err := pgx.Connect(ctx, l.dialect.listenURL)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		closeQuietly(conn)
		return nil, err
	}
	return conn, nil
}

// listenLoop wakes subscribers on each notification and reconnects when the
// connection breaks, for example when Postgres restarts.
func (l *Log) listenLoop(conn *pgx.Conn) {
	defer l.listenWG.Done()
	for {
		for {
			if _, err := conn.WaitForNotification(l.life); err != nil {
				break
			}
			l.hub.Wake()
		}
		closeQuietly(conn)
		if conn = l.reconnect(); conn == nil {
			return
		}
		// Rows appended while disconnected sent no notification we saw.
		l.hub.Wake()
	}
}

// reconnect retries with capped exponential backoff until it listens again;
// nil means the log was closed.
func (l *Log) reconnect() *pgx.Conn {
	delay := 50 * time.Millisecond
	for {
		select {
		case <-l.life.Done():
			return nil
		case <-time.After(delay):
		}
		if conn, err := l.listen(l.life); err == nil {
			return conn
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// closeQuietly closes a connection that may already be broken, without
// waiting long on a dead socket.
func closeQuietly(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}
