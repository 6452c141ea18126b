"""Drives the Trinity simulator with Ray's own Jobs client (ray.job_submission.JobSubmissionClient).

usage: ray_jobs_client_check.py <fast simulator URL> <slow simulator URL> <trinity config.yaml>

The fast simulator runs jobs to the end; on the slow one jobs stay PENDING, so "live job" cases do
not race a timer. Every step is checked here (a failed check exits non-zero with the reason); the
last line printed is a JSON report for the Java test to assert on.
"""
import asyncio
import json
import sys
import time

from ray.job_submission import JobStatus, JobSubmissionClient

TERMINAL = {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.STOPPED}


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def wait_for(client, job_id, statuses, limit_s=120):
    deadline = time.monotonic() + limit_s
    while True:
        status = client.get_job_status(job_id)
        if status in statuses:
            return status
        check(time.monotonic() < deadline, f"{job_id} still {status}, expected one of {statuses}")
        time.sleep(0.1)


def refused(call):
    """The RuntimeError text Ray's client raises for a non-200 answer, or None if it succeeded."""
    try:
        call()
    except RuntimeError as e:
        return str(e)
    return None


async def follow_missing(client):
    async for _ in client.tail_job_logs("ray-client-no-such-job"):
        pass


def main(fast_url, slow_url, config_path):
    report = {}
    client = JobSubmissionClient(fast_url)  # checks GET /api/version as Ray's client does
    report["server_ray_version"] = client._server_ray_version

    job = client.submit_job(
        entrypoint=f"trinity run --config '{config_path}'",
        submission_id="ray-client-job",
        metadata={"otl_agent_id": "ray-client-bot"},
        runtime_env={"env_vars": {"OTL_CHECK": "1"}},
        entrypoint_num_cpus=1,
    )
    check(job == "ray-client-job", f"submit_job returned {job}")
    report["first_status"] = str(client.get_job_status(job).value)
    report["final_status"] = str(wait_for(client, job, TERMINAL).value)

    info = client.get_job_info(job)
    check(info.submission_id == job, f"info.submission_id {info.submission_id}")
    check(info.start_time is not None and info.end_time is not None, f"times {info.start_time} {info.end_time}")
    check(info.end_time >= info.start_time, "end_time before start_time")
    check(info.metadata == {"otl_agent_id": "ray-client-bot"}, f"metadata {info.metadata}")
    check(info.runtime_env == {"env_vars": {"OTL_CHECK": "1"}}, f"runtime_env {info.runtime_env}")
    check(info.driver_info is not None and info.driver_info.id == info.job_id, f"driver_info {info.driver_info}")
    report["type"] = str(info.type.value)
    report["driver_exit_code"] = info.driver_exit_code
    report["job_id"] = info.job_id

    listed = client.list_jobs()
    report["listed"] = sorted(j.submission_id for j in listed)

    logs = client.get_job_logs(job)
    report["logs_mention_checkpoint"] = "global_step_" in logs

    # Follow a job's log as `ray job logs --follow` does: the WebSocket GET /api/jobs/<id>/logs/tail,
    # text frames until the server closes it when the job has ended.
    tailed = client.submit_job(entrypoint=f"trinity run --config '{config_path}'", submission_id="ray-client-tailed")

    async def follow():
        chunks = []
        async for lines in client.tail_job_logs(tailed):
            chunks.append(lines)
        return chunks

    chunks = asyncio.run(asyncio.wait_for(follow(), 120))
    report["tail_chunks"] = len(chunks)
    report["tail_ended_with_job"] = str(client.get_job_status(tailed).value)
    report["tail_is_whole_log"] = "".join(chunks) == client.get_job_logs(tailed)
    report["tail_of_missing_job"] = None
    try:
        asyncio.run(follow_missing(client))
    except Exception as e:  # aiohttp's handshake error: Ray answers 404 before any upgrade
        report["tail_of_missing_job"] = f"{type(e).__name__}: {e}"

    # Stop a live job, then delete it; a second delete finds nothing.
    slow = JobSubmissionClient(slow_url)
    live = slow.submit_job(entrypoint="trinity run --config /nonexistent.yaml")
    check(live.startswith("raysubmit_"), f"generated submission id {live}")
    report["live_delete_refusal"] = refused(lambda: slow.delete_job(live))
    check(slow.get_job_status(live) == JobStatus.PENDING, "a refused delete must leave the job alone")
    report["stopped"] = slow.stop_job(live)
    report["stopped_again"] = slow.stop_job(live)
    report["stopped_status"] = str(slow.get_job_status(live).value)
    report["deleted"] = slow.delete_job(live)
    report["missing_after_delete"] = refused(lambda: slow.get_job_info(live))
    report["duplicate_submission"] = refused(lambda: client.submit_job(entrypoint="x", submission_id=job))

    # A job that fails as Ray reports entrypoint failures.
    failed = client.submit_job(entrypoint="python train.py", submission_id="ray-client-failing")
    wait_for(client, failed, {JobStatus.FAILED})
    report["failed_error_type"] = client.get_job_info(failed).error_type
    report["deleted_ended"] = client.delete_job(job)
    client.delete_job(tailed)
    print(json.dumps(report))


if __name__ == "__main__":
    main(*sys.argv[1:4])
