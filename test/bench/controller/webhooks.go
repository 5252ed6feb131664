package main

import (
	"context"
)

// webhookCalls are the API server's admission webhook calls by webhook name
// (apiserver_admission_webhook_admission_duration_seconds).
type webhookCalls map[string]webhookTotal

// webhookTotal is how many calls a webhook had and their seconds together.
type webhookTotal struct{ Calls, Seconds float64 }

func (c clients) scrapeWebhooks(ctx context.Context) (webhookCalls, error) {
	families, err := c.scrapeFamilies(ctx)
	if err != nil {
		return nil, err
	}
	w := webhookCalls{}
	for _, m := range families["apiserver_admission_webhook_admission_duration_seconds"].GetMetric() {
		name := labelsOf(m)["name"]
		sum := w[name]
		sum.Calls += float64(m.GetHistogram().GetSampleCount())
		sum.Seconds += m.GetHistogram().GetSampleSum()
		w[name] = sum
	}
	return w, nil
}

// since is what the webhooks were called for from before to w.
func (w webhookCalls) since(before webhookCalls) webhookCalls {
	d := webhookCalls{}
	for name, now := range w {
		was := before[name]
		if now.Calls > was.Calls {
			d[name] = webhookTotal{now.Calls - was.Calls, now.Seconds - was.Seconds}
		}
	}
	return d
}
