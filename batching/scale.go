package batching

// ScaleUp reports whether a model should get one more temporary worker now,
// with queued jobs waiting, alive workers running and at most maxWorkers
// allowed. It says yes while alive < maxWorkers and either the queue holds more than
// 2 × batchSize jobs or no worker is alive while a job waits. A batchSize
// below 1 counts as 1.
//
// Call it after a Push: with nothing queued and no worker alive it says no,
// so a model whose last temporary worker was released for idleness is not
// restarted until a request comes.
func ScaleUp(queued, batchSize, alive, maxWorkers int) bool {
	if alive >= maxWorkers {
		return false
	}
	if alive <= 0 {
		return queued > 0
	}
	return queued > 2*max(batchSize, 1)
}
